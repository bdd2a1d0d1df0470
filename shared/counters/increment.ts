/**
 * The hot path: one increment, normally one storage write.
 *
 * `hits` mode inserts a hit row with a unique, time-ordered RowKey into one of the counter's
 * partitions. `sharded` mode adds to one partition's total with an ETag write, retrying lost races.
 *
 * Idempotency-Key: the key's marker row is created in the same entity-group transaction as the
 * write itself (the hit row, or the shard's total), in a partition chosen by the key. Storage then
 * guarantees "counted once" on its own — a retry's transaction fails on the existing marker and
 * changes nothing — for the price of that one transaction. A separate idempotency record (read,
 * write, store the response) would cost two more round trips and still double-count when two
 * retries race or the process dies between the write and the record. A RowKey derived from the key
 * alone would break the time order the rollup relies on and protect only until the hit is folded.
 */
import { AppError } from '../errors';
import { retryLostRaces } from '../retry';
import type { StoredCounter } from './catalog';
import { type CounterRuntime, retryContext } from './context';
import type { MarkerWrite } from './dataStore';
import { dataPartitionKey, keyedPartition } from './keys';
import { ShardPicker } from './shardPicker';
import { applyChange, writeOutcome } from './total';

export interface IncrementDeps extends CounterRuntime {
  /** How long an Idempotency-Key is remembered (at least; markers are swept some time after). */
  readonly idempotencyTtlMs: number;
}

export interface IncrementResult {
  readonly name: string;
  readonly by: number;
  /** True when an earlier request with the same Idempotency-Key was already counted. */
  readonly replayed: boolean;
}

interface Target {
  readonly name: string;
  readonly partitionKey: string;
  readonly by: number;
  readonly key: string | undefined;
}

export class Incrementer {
  private readonly shards: ShardPicker;

  constructor(private readonly deps: IncrementDeps) {
    this.shards = new ShardPicker(deps.random);
  }

  async increment(counter: StoredCounter, by: number, idempotencyKey?: string): Promise<IncrementResult> {
    const { name } = counter;
    const { partitions, mode } = counter.definition;
    const target = (index: number): Target => ({ name, partitionKey: dataPartitionKey(name, index), by, key: idempotencyKey });
    let replayed: boolean;
    if (idempotencyKey !== undefined) {
      const index = keyedPartition(idempotencyKey, partitions);
      replayed = mode === 'hits' ? await this.addHit(target(index)) : await this.addToShard(target(index));
    } else if (mode === 'hits') {
      // Inserts never conflict: any partition will do.
      replayed = await this.addHit(target(Math.floor(this.deps.random() * partitions)));
    } else {
      const index = this.shards.take(name, partitions);
      try {
        replayed = await this.addToShard(target(index));
      } finally {
        this.shards.release(name, index);
      }
    }
    return { name, by, replayed };
  }

  private markerFor(target: Target, op: string, now: number): MarkerWrite | undefined {
    if (target.key === undefined) return undefined;
    return { idempotencyKey: target.key, marker: { op, by: target.by }, expiresAt: now + this.deps.idempotencyTtlMs };
  }

  private async addHit(target: Target): Promise<boolean> {
    const now = this.deps.clock.now();
    const rowKey = this.deps.keys.next(now);
    const marker = this.markerFor(target, rowKey, now);
    if (marker === undefined) {
      await this.deps.data.insertHit(target.partitionKey, rowKey, target.by);
    } else if (!(await this.deps.data.insertKeyedHit(target.partitionKey, rowKey, target.by, marker))) {
      const replayed = await this.replayed(target, rowKey);
      if (replayed) return true;
    }
    await this.deps.dirty.mark(target.partitionKey, now);
    return false;
  }

  private async addToShard(target: Target): Promise<boolean> {
    const now = this.deps.clock.now();
    const opId = this.deps.keys.next(now);
    const marker = this.markerFor(target, opId, now);
    let basedOn: number | undefined;
    const outcome = await retryLostRaces(retryContext(this.deps, `counter shard ${target.partitionKey}`), async () => {
      const current = await this.deps.data.readTotal(target.partitionKey);
      // A previous attempt whose response was lost may have landed: its id would be in the ring.
      if (basedOn !== undefined) {
        const previous = writeOutcome(current, opId, basedOn);
        if (previous === 'applied') return 'written' as const;
        if (previous === 'unknown') {
          throw new AppError(
            'DependencyUnavailable',
            `Could not tell whether an increment of ${target.name} was applied; retry with an Idempotency-Key`,
            {
              retryAfterSeconds: 1,
            },
          );
        }
      }
      basedOn = current.version;
      const written = await this.deps.data.writeTotal(target.partitionKey, applyChange(current, { delta: target.by, opId }), marker);
      return written.kind;
    });
    if (outcome === 'markerExists' && (await this.replayed(target, opId))) return true;
    // Keyed shard writes leave markers behind; marking the partition lets the rollup sweep them.
    if (marker !== undefined) await this.deps.dirty.mark(target.partitionKey, now);
    return false;
  }

  /**
   * The marker of `target.key` exists. True when it belongs to an earlier request; false when it is
   * this request's own write, which landed although its response was lost.
   */
  private async replayed(target: Target, op: string): Promise<boolean> {
    if (target.key === undefined) throw new AppError('Internal', 'An increment without an Idempotency-Key has no marker');
    const marker = await this.deps.data.readMarker(target.partitionKey, target.key);
    if (marker === undefined)
      throw new AppError('Conflict', `The Idempotency-Key of this increment of ${target.name} changed concurrently; retry`);
    if (marker.op === op) return false;
    if (marker.by !== target.by) {
      throw new AppError('Conflict', `This Idempotency-Key was first used to add ${marker.by} to ${target.name}, not ${target.by}`, {
        extra: { firstBy: marker.by },
      });
    }
    return true;
  }
}
