/**
 * `tallyho.stream.buffer.depth`, read from the writers' state when a reader collects, not remembered
 * from the last append or flush (issue #40: a remembered depth showed events as buffered after they
 * were flushed). Each collection lists the writers the app knows (sweep.ts `writerKeys`: the
 * admitted types' routes and the app's own types') and reads each one's ledger — the read the status
 * view makes (admin.ts, `bufferDepth`) — and reports, per partition, the sum over its writers.
 *
 * Cost per export, on each instance: one page of the admitted types per 500 types with one read of
 * their route rows, then one ledger read (a Durable entity-state read) per writer — at most
 * TALLYHO_STREAMS_MAX_TYPES plus the app's own types, 8 at a time: the reads the sweep timer makes
 * once a minute. Every instance reads the same state, so each reports the same figure (aggregate
 * instances with max, not sum).
 *
 * A read that failed reports nothing: the listing failing reports no partition, one writer's ledger
 * failing reports nothing for its partition (a sum without it would be a wrong figure). With the
 * exporters' fresh gauges (telemetry/freshGauges.ts) a partition not reported is absent from that
 * export, never its last value.
 */
import type { DurableClient } from '../durable/client';
import { mapLimited } from '../mapLimited';
import { streamsTelemetry, type StreamsContext } from './context';
import { depthOfLedger, type LedgerState } from './ledger';
import { parseWriterKey } from './names';

const concurrentReads = 8;

export interface DepthReads {
  /** The keys of every writer the app knows. */
  writers(): Promise<readonly string[]>;
  readLedger(key: string): Promise<LedgerState | undefined>;
}

/** Unflushed events per partition, over the partitions whose every writer could be read. */
export async function partitionDepths(reads: DepthReads): Promise<Map<string, number>> {
  const keys = await reads.writers();
  const read = await mapLimited(keys, concurrentReads, async (key) => {
    const { partition } = parseWriterKey(key);
    try {
      return { partition, depth: depthOfLedger(await reads.readLedger(key)) };
    } catch {
      return { partition, depth: undefined };
    }
  });
  const depths = new Map<string, number>();
  const unread = new Set<string>();
  for (const { partition, depth } of read) {
    if (depth === undefined) unread.add(partition);
    else depths.set(partition, (depths.get(partition) ?? 0) + depth);
  }
  for (const partition of unread) depths.delete(partition);
  return depths;
}

/**
 * Observes the depth gauge with `durable`, the Durable client to read ledgers with (a collection runs
 * outside any invocation: the functions layer hands the latest invocation's client). None yet: no
 * point.
 */
export function observeDepth(
  ctx: Pick<StreamsContext, 'telemetry'>,
  durable: () => DurableClient | undefined,
  reads: (client: DurableClient) => DepthReads,
): void {
  streamsTelemetry(ctx).metrics.depth.observe(async (report) => {
    const client = durable();
    if (client === undefined) return;
    let depths: Map<string, number>;
    try {
      depths = await partitionDepths(reads(client));
    } catch {
      return;
    }
    for (const [partition, depth] of depths) report(depth, { 'tallyho.stream.partition': partition });
  });
}
