/** Splitting the waiting runs into notify batches (pure; used by the release orchestrator). */

/** `items` in consecutive batches of at most `size` (at least 1), order kept. */
export function batches<T>(items: readonly T[], size: number): T[][] {
  const step = Math.max(1, Math.floor(size));
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += step) out.push(items.slice(i, i + step));
  return out;
}
