/**
 * Work to do when the host stops the app gracefully (e.g. returning the unused tail of a sequence
 * block). functions/ calls `runShutdown` from the `appTerminate` hook.
 */
type ShutdownTask = () => Promise<void>;

const tasks = new Set<ShutdownTask>();

export function onShutdown(task: ShutdownTask): () => void {
  tasks.add(task);
  return () => tasks.delete(task);
}

/** Runs every task once, concurrently; one failing does not stop the others. */
export async function runShutdown(): Promise<PromiseSettledResult<void>[]> {
  const pending = [...tasks];
  tasks.clear();
  return Promise.allSettled(pending.map((task) => task()));
}
