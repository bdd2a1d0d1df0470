/**
 * The hot path: one increment, normally one storage write.
 *
 * `hits` mode inserts a hit row with a unique, time-ordered RowKey into one of the counter's
 * partitions. `sharded` mode adds to one partition's total with an ETag write, retrying lost races.
 *
 * Group commit: while `writesInFlight` writes of a counter are under way on this instance, further
 * increments wait, and the next free slot writes all of them as ONE change — one hit row whose `by`
 * is their sum, or one shard write adding their sum under one write id. Each caller is answered when
 * the write carrying its increment has landed, so an acknowledgement still means "stored". The
 * write is the same write as an increment of that sum, and each argument below is about one write,
 * so it holds per batch: a lost race retries the whole batch, a lost response is recognised for the
 * whole batch (a hit's unique RowKey, a shard's ring of write ids), and an error reaches every
 * caller of the batch — none of whom was acknowledged, and the batch landed entirely or not at all.
 * A lone increment finds a free slot and goes out at once: batching adds no wait without contention.
 * The slots take different partitions (least busy first), so no two batch writes of one instance
 * contend for a shard, and a shard's last write is remembered (with its ETag) to skip the re-read.
 *
 * Idempotency-Key: the key's marker row is created in the same entity-group transaction as the
 * write itself (the hit row, or the shard's total), in a partition chosen by the key. Storage then
 * guarantees "counted once" on its own — a retry's transaction fails on the existing marker and
 * changes nothing — for the price of that one transaction. A separate idempotency record (read,
 * write, store the response) would cost two more round trips and still double-count when two
 * retries race or the process dies between the write and the record. A RowKey derived from the key
 * alone would break the time order the rollup relies on and protect only until the hit is folded.
 * Keyed increments are not batched: a duplicate key fails its whole transaction, and telling which
 * key of a batch it was would cost a read per key; they take the one-transaction path above.
 */
import { AppError } from '../errors';
import { GroupCommit } from '../groupCommit';
import { retryLostRaces, retryContextOf } from '../retry';
import type { StoredCounter } from './catalog';
import type { CounterRuntime } from './context';
import type { MarkerWrite } from './dataStore';
import { dataPartitionKey, keyedPartition } from './keys';
import { ShardPicker } from './shardPicker';
import { applyChange, type Total, writeOutcome } from './total';

export interface IncrementDeps extends CounterRuntime {
  /** How long an Idempotency-Key is remembered (at least; markers are swept some time after). */
  readonly idempotencyTtlMs: number;
  /**
   * Writes one instance keeps under way per counter (capped by its partitions); increments arriving
   * meanwhile join the next write. 0: every increment is its own write, as a plain ETag counter.
   */
  readonly writesInFlight: number;
}

/**
 * Increments one write carries at most. Bounds how many callers share one failure, and the sum:
 * |by| ≤ TALLYHO_COUNTERS_MAX_INCREMENT ≤ 10^9, so |sum| ≤ 10^12, far inside the safe integers.
 */
const maxIncrementsPerWrite = 1000;

/** Shard totals this instance wrote last, per data partition, at most (a hint: the ETag decides). */
const knownTotalsKept = 1000;

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

interface Pending {
  readonly counter: StoredCounter;
  readonly by: number;
}

export class Incrementer {
  private readonly shards: ShardPicker;
  private readonly batches: GroupCommit<Pending, void> | undefined;
  /** Shard totals as this instance last wrote them; only batch writes use them (one per shard at a time). */
  private readonly known = new Map<string, Total>();

  constructor(private readonly deps: IncrementDeps) {
    this.shards = new ShardPicker(deps.random);
    this.batches =
      deps.writesInFlight > 0
        ? new GroupCommit((_, batch) => this.writeBatch(batch), { maxInFlight: deps.writesInFlight, maxItems: maxIncrementsPerWrite })
        : undefined;
  }

  async increment(counter: StoredCounter, by: number, idempotencyKey?: string): Promise<IncrementResult> {
    const { name } = counter;
    const { partitions, mode } = counter.definition;
    const target = (index: number): Target => ({ name, partitionKey: dataPartitionKey(name, index), by, key: idempotencyKey });
    let replayed = false;
    if (idempotencyKey !== undefined) {
      const index = keyedPartition(idempotencyKey, partitions);
      replayed = mode === 'hits' ? await this.addHit(target(index)) : await this.addToShard(target(index));
    } else if (this.batches !== undefined) {
      // Batches of one key share the settings they were written under: a settings refresh starts a new key.
      const key = `${name}/${mode}/${partitions}`;
      await this.batches.submit(key, { counter, by }, Math.min(partitions, this.deps.writesInFlight));
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

  /** One write of a batch's sum, to the least busy partition: no other batch write of this instance is on it. */
  private async writeBatch(batch: readonly Pending[]): Promise<void> {
    const counter = batch[0]?.counter;
    if (counter === undefined) return;
    const { name } = counter;
    const by = batch.reduce((sum, p) => sum + p.by, 0);
    const index = this.shards.take(name, counter.definition.partitions);
    try {
      const target = { name, partitionKey: dataPartitionKey(name, index), by, key: undefined };
      if (counter.definition.mode === 'hits') await this.addHit(target);
      else await this.addToShard(target, true);
    } finally {
      this.shards.release(name, index);
    }
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

  /**
   * Adds `target.by` to a shard. With `remember`, the first attempt writes on the total this instance
   * wrote last instead of reading it: if anyone wrote since, the ETag fails the write (412) and the
   * retry reads. The entry is taken out while the write is under way and put back only on success.
   */
  private async addToShard(target: Target, remember = false): Promise<boolean> {
    const { partitionKey } = target;
    const now = this.deps.clock.now();
    const opId = this.deps.keys.next(now);
    const marker = this.markerFor(target, opId, now);
    let basedOn: number | undefined;
    const outcome = await retryLostRaces(retryContextOf(this.deps, `counter shard ${partitionKey}`), async () => {
      const known = remember && basedOn === undefined ? this.takeKnown(partitionKey) : undefined;
      const current = known ?? (await this.deps.data.readTotal(partitionKey));
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
      const next = applyChange(current, { delta: target.by, opId });
      const written = await this.deps.data.writeTotal(partitionKey, next, marker);
      if (remember && written.kind === 'written') this.rememberKnown(partitionKey, { ...next, etag: written.etag });
      return written.kind;
    });
    if (outcome === 'markerExists' && (await this.replayed(target, opId))) return true;
    // Keyed shard writes leave markers behind; marking the partition lets the rollup sweep them.
    if (marker !== undefined) await this.deps.dirty.mark(partitionKey, now);
    return false;
  }

  private takeKnown(partitionKey: string): Total | undefined {
    const total = this.known.get(partitionKey);
    this.known.delete(partitionKey);
    return total;
  }

  private rememberKnown(partitionKey: string, total: Total): void {
    this.known.set(partitionKey, total);
    // Map order is insertion order, and a used entry is taken out and put back: the first is the stalest.
    if (this.known.size > knownTotalsKept) this.known.delete(this.known.keys().next().value ?? partitionKey);
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
