/**
 * The arithmetic of folding hits into a total and of reading a partition, kept pure.
 *
 * Why a fold can neither lose nor double-count a hit: every fold is ONE entity-group transaction in
 * the hit's own partition that deletes the folded hit rows and rewrites the total (count and
 * watermark) conditionally on its ETag. Storage applies all of it or none of it, so at every moment
 * a hit is either a present row or part of `count`, never both and never neither:
 *  - two rollups racing: both read the same ETag; the second transaction fails (412 on the total, or
 *    404 on a hit the first already deleted) and changes nothing; the loser re-reads and folds what
 *    is left;
 *  - a rollup that dies between transactions leaves only whole transactions behind: the rows it
 *    did not get to are still present and still pending;
 *  - a response lost after the transaction applied: the SDK's retry fails the same way as a racing
 *    rollup, the re-read shows the hits gone and the count raised.
 * The watermark therefore does not decide what is counted. It makes reads safe against a fold that
 * commits while a read is paging: a read takes the hits, then the total row (it sorts last), and
 * skips hit rows at or below that total's watermark — exactly the rows the newer total already holds.
 */
import { bucketMs } from './keys';
import type { Total } from './total';

export interface HitRow {
  readonly rowKey: string;
  readonly by: number;
}

/** One entity-group transaction of a fold: the rows it deletes and what it adds to the total. */
export interface FoldStep {
  readonly deletes: readonly string[];
  readonly delta: number;
  /** The total's watermark after this step: the newest RowKey folded so far. */
  readonly watermark: string;
}

/** An entity-group transaction holds at most 100 operations; one of them is the total's write. */
export const maxHitsPerTransaction = 99;

/**
 * Splits `hits` into transactions in RowKey order, so each step's watermark covers exactly what
 * has been folded so far (a late hit below the old watermark simply goes first).
 */
export function planFold(watermark: string, hits: readonly HitRow[], perTransaction = maxHitsPerTransaction): FoldStep[] {
  if (perTransaction < 1 || perTransaction > maxHitsPerTransaction) throw new RangeError('perTransaction out of range');
  const sorted = [...hits].sort((a, b) => (a.rowKey < b.rowKey ? -1 : a.rowKey > b.rowKey ? 1 : 0));
  const steps: FoldStep[] = [];
  let mark = watermark;
  for (let at = 0; at < sorted.length; at += perTransaction) {
    const chunk = sorted.slice(at, at + perTransaction);
    const last = chunk[chunk.length - 1]?.rowKey ?? mark;
    if (last > mark) mark = last;
    steps.push({ deletes: chunk.map((h) => h.rowKey), delta: chunk.reduce((sum, h) => sum + h.by, 0), watermark: mark });
  }
  return steps;
}

export interface PartitionValue {
  readonly value: number;
  /** Hit rows counted individually (not yet in the total). */
  readonly pending: number;
  /** Present hit rows at or below the watermark, skipped by a `visible` read. */
  readonly late: number;
}

/**
 * A partition's value from its total and the hit rows read with it. `visible` trusts the watermark
 * (safe against a fold committing mid-read); `all` counts every present row and is only correct
 * when the caller has proved no fold committed during the read (see the consistent read).
 */
export function partitionValue(total: Total, hits: readonly HitRow[], mode: 'visible' | 'all'): PartitionValue {
  let value = total.count;
  let pending = 0;
  let late = 0;
  for (const hit of hits) {
    if (mode === 'visible' && hit.rowKey <= total.watermark) {
      late++;
      continue;
    }
    value += hit.by;
    pending++;
  }
  return { value, pending, late };
}

/**
 * Dirty-index rows that may go once a partition has been folded up to `cutoff`: a row for bucket B
 * says "this partition got hits stamped in B", and all of those are folded once B ended before the
 * cutoff. Rows of later buckets stay, so the partition is visited again.
 */
export function finishedBuckets(bucketStarts: readonly number[], cutoff: number): number[] {
  return bucketStarts.filter((start) => start + bucketMs <= cutoff);
}
