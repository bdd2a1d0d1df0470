/** Back-off with jitter and `Retry-After`, shared by HTTP retries and event-stream reconnects. */

export interface BackoffPolicy {
  /** First delay before jitter. */
  readonly baseMs: number;
  /** No delay exceeds this, whatever the attempt or the server's Retry-After. */
  readonly capMs: number;
}

/**
 * "Equal jitter": half the exponential delay is kept, the other half is random, so a fleet that
 * failed together spreads out but no client retries at once. `random` is injected for tests.
 */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number): number {
  const exponential = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(exponential / 2 + (random() * exponential) / 2);
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
