/**
 * The model of one caller's long polls and event streams (test/e2e/twoCallersPools.test.ts): each
 * request the test holds open, and what the server must hold of them. A caller at its share of
 * TALLYHO_HTTP_MAX_HELD gives up its own oldest held request (shared/shares.ts, `preempt`); the
 * other caller's are never touched.
 */
import type { E2eHost } from './harness';
import { sendAs } from './twoCallers';
import { until } from './wait';

/**
 * A long poll or event stream this test holds open: `ended` once its answer is read to the end;
 * `hungUp` once this test (or a release) ended it; `preempted` once the model says its own caller's
 * newer request took its place.
 */
export interface Held {
  readonly abort: AbortController;
  ended: boolean;
  hungUp: boolean;
  preempted: boolean;
}

/** Held requests the model says the server holds. */
export const live = (held: readonly Held[]): Held[] => held.filter((h) => !h.hungUp && !h.preempted);

/**
 * Opens `path` (a long poll or an event stream) as the caller of `headers`, read to its end in the
 * background, and marks the caller's oldest live one preempted when it is at its `share`.
 */
export function open(host: E2eHost, headers: Readonly<Record<string, string>>, held: Held[], path: string, share: number): void {
  const oldest = live(held)[0];
  if (live(held).length >= share && oldest !== undefined) oldest.preempted = true;
  const h: Held = { abort: new AbortController(), ended: false, hungUp: false, preempted: false };
  held.push(h);
  void fetch(host.url(path), { headers, signal: h.abort.signal })
    .then((res) => res.text())
    .then(
      () => void (h.ended = true),
      () => void (h.ended = true),
    );
}

/**
 * Waits until the server holds what the model says for the caller (`GET /api/callers/me`): its live
 * requests, never more than `share`, and the preempted ones ended. Answers how many ended early.
 */
export async function heldAsModelled(
  host: E2eHost,
  headers: Readonly<Record<string, string>>,
  held: readonly Held[],
  share: number,
): Promise<number> {
  const kept = live(held);
  const early = held.filter((h) => h.preempted);
  await until(`held requests: ${kept.length} held, ${early.length} ended early`, async () => {
    const me = await sendAs(host, headers, 'GET', '/api/callers/me');
    const holds = me.body.holds as { heldRequests: number };
    expect(holds.heldRequests).toBeLessThanOrEqual(share);
    return holds.heldRequests === kept.length && early.every((h) => h.ended) ? true : undefined;
  });
  // Nobody's newer request took one of these (the other caller's least of all): they are still open.
  for (const h of kept) expect(h.ended).toBe(false);
  return early.length;
}
