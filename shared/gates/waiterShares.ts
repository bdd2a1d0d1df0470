/**
 * Waiting runs are fair shares by caller (shared/shares.ts): one caller may hold at most a quarter
 * of TALLYHO_GATES_MAX_WAITERS waiting runs of a generation, so one caller cannot fill a gate for
 * the others. Each caller's count of the runs now waiting is a row in the gate's partition,
 * `hold-<openSince>-<caller>` (the runs a release will let go are those since `openSince`, carried
 * ones included), read after the gate row and written in the same If-Match transaction as it: no
 * other write changes it, so the gate row's ETag guards it too. Late joiners (the gate released)
 * wait for nothing and take no place. A release deletes the rows of the runs it let go
 * (./releases.ts), and of any earlier ones an instance that stopped left behind.
 */
import { shareOf, verdict } from '../shares';
import type { GateEntity } from './rows';

const pad = (n: number): string => String(n).padStart(10, '0');

/** The caller id escaped for a RowKey (no `/`, `\`, `#` or `?`); `hold-` sorts apart from every other kind of row. */
export function holderRowKey(openSince: number, holder: string): string {
  return `hold-${pad(openSince)}-${encodeURIComponent(holder)}`;
}

/**
 * The key range of every holder row of the runs let go by releases through `openSince` (the rows of
 * `openSince` and of older ones): a released generation's rows are never written again, since each
 * write of them goes with the gate row's If-Match and a gate row never closes on an old `openSince`.
 */
export function holderRowRange(throughOpenSince: number): readonly [string, string] {
  return ['hold-', `hold-${pad(throughOpenSince + 1)}-`];
}

/** The most one caller may hold waiting: a quarter of the generation's limit. */
export function waiterShare(maxWaiters: number): number {
  return shareOf(maxWaiters).share;
}

export interface ShareDecision<T> {
  /** In arrival order: those within their caller's share (the total limit is the transition's). */
  readonly within: readonly T[];
  readonly over: readonly T[];
}

/** Splits runs by their caller's share, counting the ones before them in the same batch. */
export function splitByShare<T>(
  items: readonly T[],
  holderOf: (item: T) => string,
  held: ReadonlyMap<string, number>,
  share: number,
): ShareDecision<T> {
  const counts = new Map(held);
  const within: T[] = [];
  const over: T[] = [];
  for (const item of items) {
    const holder = holderOf(item);
    const n = counts.get(holder) ?? 0;
    // The total is left to the transition (Infinity here): only the share is decided per caller.
    if (verdict({ capacity: Infinity, share }, 0, n) === 'admit') {
      within.push(item);
      counts.set(holder, n + 1);
    } else over.push(item);
  }
  return { within, over };
}

/** The holder rows after `accepted` runs were added to the counts read. */
export function holderEntities<T>(
  gate: string,
  openSince: number,
  accepted: readonly T[],
  holderOf: (item: T) => string,
  held: ReadonlyMap<string, number>,
): GateEntity[] {
  const counts = new Map<string, number>();
  for (const item of accepted) counts.set(holderOf(item), (counts.get(holderOf(item)) ?? held.get(holderOf(item)) ?? 0) + 1);
  return [...counts].map(([holder, n]) => ({ partitionKey: gate, rowKey: holderRowKey(openSince, holder), n }));
}
