/**
 * Starting an orchestration that must exist once per id (a gate's release of one generation, a
 * schedule, a stream writer's flusher). Several callers may start the same id at once; Durable
 * refuses every start but the first while that instance is live, so a refused start that finds an
 * instance is the concurrent caller's success, not a failure.
 *
 * One meaning for every caller: resolves `started` when this call started the instance, `existing`
 * when the start was refused and an instance with the id exists — whatever its status, since it may
 * have finished between the refusal and the read (gates then read its answer; a schedule's
 * reconciler restarts one that failed). Throws the start's own error when no instance exists (the
 * refusal was something else: storage down, a bad input). It does not read the status first:
 * callers on hot paths (a gated run) pay one request, and a caller that must not replace a finished
 * instance (streams' flusher: it reads the status anyway) checks `isLive` before calling.
 */
import type { DurableClient } from './client';

export async function startSingleton(
  client: Pick<DurableClient, 'startNew' | 'getStatus'>,
  orchestration: string,
  instanceId: string,
  input: unknown,
): Promise<'started' | 'existing'> {
  try {
    await client.startNew(orchestration, instanceId, input);
    return 'started';
  } catch (err) {
    const status = await client.getStatus(instanceId).catch(() => undefined);
    if (status === undefined) throw err;
    return 'existing';
  }
}
