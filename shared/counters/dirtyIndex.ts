/**
 * Which counter partitions have hits waiting to be folded, so the rollup visits only those: its cost
 * follows activity, not the number of counters. A row (PartitionKey = minute bucket of the hit's
 * time, RowKey = data partition) says "this partition got hits stamped in this minute".
 *
 * A writer upserts the row AFTER its hit landed, and each instance does so once per bucket and data
 * partition (remembered in memory), so marking costs a handful of writes per minute, not one per
 * hit. The rollup deletes a row only with the ETag it read before folding: a writer that marks again
 * meanwhile changes the ETag, the delete fails, and the partition is visited next run. Either way a
 * hit whose writer marked is folded by some run.
 */
import { odata, type TableClient } from '@azure/data-tables';

import type { Logger } from '../log';
import { hasStatus, translateStorageError } from '../storage/errors';
import { bucketMs, bucketPartitionKey, bucketStart, parseBucketPartitionKey, parseDataPartitionKey } from './keys';

export interface DirtyRow {
  readonly bucket: number;
  /** The data partition, `name|NN`. */
  readonly partitionKey: string;
  readonly name: string;
  readonly etag: string;
}

/**
 * How far the rollup is behind: the age of the oldest minute with hits not folded yet, in ms (0: none).
 * The rollup reports it at each run (the tallyho.counter.rollup.lag gauge) and the figures route on demand.
 */
export function oldestUnfoldedMs(rows: readonly DirtyRow[], now: number): number {
  return now - rows.reduce((min, row) => Math.min(min, row.bucket), now);
}

/** How many buckets back an instance remembers its marks; older entries are dropped. */
const rememberedBuckets = 3;

export class DirtyIndex {
  private readonly marked = new Set<string>();
  private newestBucket = 0;

  constructor(
    private readonly table: () => Promise<TableClient>,
    private readonly logger: Logger,
  ) {}

  /**
   * Marks `partitionKey` dirty for the bucket of `hitTime`, unless this instance already did. A
   * failure is logged, not thrown: the hit is stored and counted by reads either way, and the next
   * increment on this instance tries the mark again.
   */
  async mark(partitionKey: string, hitTime: number): Promise<void> {
    const bucket = bucketStart(hitTime);
    const id = `${bucket}/${partitionKey}`;
    if (this.marked.has(id)) return;
    try {
      const table = await this.table();
      await table.upsertEntity({ partitionKey: bucketPartitionKey(bucket), rowKey: partitionKey }, 'Replace');
    } catch (err) {
      this.logger.log('warn', 'counter.dirty_mark_failed', {
        partition: partitionKey,
        error: translateStorageError(err, 'marking a counter partition'),
      });
      return;
    }
    this.marked.add(id);
    this.forgetOld(bucket);
  }

  /** Rows of every bucket up to the one `now` falls in, oldest bucket first. */
  async list(now: number, limit: number): Promise<DirtyRow[]> {
    const table = await this.table();
    const rows: DirtyRow[] = [];
    try {
      const entities = table.listEntities({
        queryOptions: { filter: odata`PartitionKey ge ${'b'} and PartitionKey le ${bucketPartitionKey(now)}` },
      });
      for await (const entity of entities) {
        const bucket = parseBucketPartitionKey(entity.partitionKey ?? '');
        const data = parseDataPartitionKey(entity.rowKey ?? '');
        if (bucket === undefined || data === undefined || entity.rowKey === undefined || entity.etag === undefined) continue;
        rows.push({ bucket, partitionKey: entity.rowKey, name: data.name, etag: entity.etag });
        if (rows.length >= limit) break;
      }
    } catch (err) {
      throw translateStorageError(err, 'listing dirty counter partitions');
    }
    return rows;
  }

  /** Deletes `row` if nobody marked it again since it was listed; true when it is gone. */
  async remove(row: DirtyRow): Promise<boolean> {
    const table = await this.table();
    try {
      await table.deleteEntity(bucketPartitionKey(row.bucket), row.partitionKey, { etag: row.etag });
      return true;
    } catch (err) {
      if (hasStatus(err, 404)) return true;
      if (hasStatus(err, 412)) return false;
      throw translateStorageError(err, `clearing dirty counter partition ${row.partitionKey}`);
    }
  }

  private forgetOld(bucket: number): void {
    if (bucket <= this.newestBucket) return;
    this.newestBucket = bucket;
    const oldest = bucket - rememberedBuckets * bucketMs;
    for (const id of this.marked) if (Number(id.slice(0, id.indexOf('/'))) < oldest) this.marked.delete(id);
  }
}
