/**
 * Reading a counter: per partition, the pending hit rows and then the total row, in one query
 * (one round trip while fewer than 1,000 hits are pending).
 *
 * The default read trusts each partition's watermark (see plan.ts): exact, and safe against a fold
 * committing mid-read, for every hit written within the safety window of its timestamp. A hit
 * that lands later than that (a writer's clock behind by more than the window) and below the
 * watermark is skipped until the next rollup folds it — never lost, never counted twice.
 *
 * The consistent read (`?consistent=true`) counts every present hit row, late ones included. It
 * reads each partition's total before and after (the query ends with it) and accepts the partition
 * only if the two ETags match: no fold committed in between, so rows and total are one state.
 * Twice the round trips of the default read.
 */
import { LostRace, retryLostRaces, retryContextOf } from '../retry';
import type { StoredCounter } from './catalog';
import type { CounterRuntime } from './context';
import { dataPartitionKey } from './keys';
import { mapLimited } from '../mapLimited';
import { type PartitionValue, partitionValue } from './plan';

export type ReaderDeps = Pick<CounterRuntime, 'data' | 'clock' | 'random' | 'logger' | 'backoff'>;

export interface CounterValue {
  readonly name: string;
  readonly mode: StoredCounter['definition']['mode'];
  readonly value: number;
  /** The newest rollup cutoff reached in any partition (ISO time), or null before the first fold. */
  readonly watermark: string | null;
  /** Hit rows counted individually by this read, not yet folded into a total. */
  readonly pendingHits: number;
  readonly consistent: boolean;
}

const readConcurrency = 16;

export class CounterReader {
  constructor(private readonly deps: ReaderDeps) {}

  async read(counter: StoredCounter, consistent: boolean): Promise<CounterValue> {
    const indexes = Array.from({ length: counter.readPartitions }, (_, i) => i);
    const parts = await mapLimited(indexes, readConcurrency, (i) => {
      const partitionKey = dataPartitionKey(counter.name, i);
      // A sharded total is one row, always exact; only pending hit rows need the before/after check.
      return consistent && counter.definition.mode === 'hits' ? this.readConsistent(partitionKey) : this.readVisible(partitionKey);
    });
    let value = 0;
    let pendingHits = 0;
    let rolledTo: number | undefined;
    for (const part of parts) {
      value += part.value;
      pendingHits += part.pending;
      if (part.rolledTo !== undefined && (rolledTo === undefined || part.rolledTo > rolledTo)) rolledTo = part.rolledTo;
    }
    return {
      name: counter.name,
      mode: counter.definition.mode,
      value,
      watermark: rolledTo === undefined ? null : new Date(rolledTo).toISOString(),
      pendingHits,
      consistent,
    };
  }

  private async readVisible(partitionKey: string): Promise<PartitionValue & { rolledTo: number | undefined }> {
    const { total, hits } = await this.deps.data.readPartition(partitionKey);
    return { ...partitionValue(total, hits, 'visible'), rolledTo: total.rolledTo };
  }

  private readConsistent(partitionKey: string): Promise<PartitionValue & { rolledTo: number | undefined }> {
    return retryLostRaces(retryContextOf(this.deps, `counter partition ${partitionKey}`), async () => {
      const before = await this.deps.data.readTotal(partitionKey);
      const { total, hits } = await this.deps.data.readPartition(partitionKey);
      if (total.etag !== before.etag) throw new LostRace(`${partitionKey} was folded during the read`);
      return { ...partitionValue(total, hits, 'all'), rolledTo: total.rolledTo };
    });
  }
}
