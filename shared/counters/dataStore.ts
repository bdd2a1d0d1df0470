/**
 * Storage operations on counter data partitions (`counterdata`, layout in keys.ts). Every method is
 * one storage round trip (queries: one per page) so costs can be read off the callers. Losing an
 * optimistic-concurrency race surfaces as `LostRace`; an insert that meets an existing row reports it
 * instead of failing, because the callers know what that means.
 */
import { odata, type TableClient, type TransactionAction } from '@azure/data-tables';

import { AppError } from '../errors';
import { LostRace } from '../retry';
import { hasStatus, translateStorageError } from '../storage/errors';
import { isHitRowKey, markerRangeEnd, markerRowKey, timeKey, totalRowKey } from './keys';
import type { HitRow } from './plan';
import { emptyTotal, parseTotal, type Total, totalEntity } from './total';

export interface Marker {
  /** Id of the write the marker was created with (the hit's RowKey, or the shard write's id). */
  readonly op: string;
  readonly by: number;
}

/** A row to create in the same transaction as a write, so both land or neither does. */
export interface MarkerWrite {
  readonly idempotencyKey: string;
  readonly marker: Marker;
  readonly expiresAt: number;
}

export type TotalWrite = { readonly kind: 'written'; readonly etag: string } | { readonly kind: 'markerExists' };

export interface PartitionRead {
  readonly total: Total;
  readonly hits: HitRow[];
}

/** A batch holds at most 100 operations. */
const maxBatch = 100;

function markerEntity(partitionKey: string, write: MarkerWrite) {
  return {
    partitionKey,
    rowKey: markerRowKey(write.idempotencyKey),
    op: write.marker.op,
    b: write.marker.by,
    // A fixed-width string compares correctly in a filter on every table backend (Int64 literals do not).
    x: timeKey(write.expiresAt),
  };
}

function byOf(raw: Record<string, unknown>, where: string): number {
  const by = raw.b;
  if (typeof by !== 'number' || !Number.isSafeInteger(by)) throw new AppError('CorruptState', `Counter row ${where} has no integer "b"`);
  return by;
}

function totalWrite(partitionKey: string, next: Total): TransactionAction {
  const entity = totalEntity(partitionKey, totalRowKey, next);
  return next.etag === undefined ? ['create', entity] : ['update', entity, 'Replace', { etag: next.etag }];
}

export class CounterDataStore {
  constructor(private readonly table: () => Promise<TableClient>) {}

  /**
   * Inserts a hit row. RowKeys are unique per attempt, so a 409 can only be this very insert,
   * retried by the SDK after its response was lost: it landed, which is success.
   */
  async insertHit(partitionKey: string, rowKey: string, by: number): Promise<void> {
    const table = await this.table();
    try {
      await table.createEntity({ partitionKey, rowKey, b: by });
    } catch (err) {
      if (!hasStatus(err, 409)) throw translateStorageError(err, `writing a hit to ${partitionKey}`);
    }
  }

  /** Inserts a hit row and its idempotency marker atomically; false when either already exists. */
  async insertKeyedHit(partitionKey: string, rowKey: string, by: number, marker: MarkerWrite): Promise<boolean> {
    const table = await this.table();
    try {
      await table.submitTransaction([
        ['create', { partitionKey, rowKey, b: by }],
        ['create', markerEntity(partitionKey, marker)],
      ]);
      return true;
    } catch (err) {
      if (hasStatus(err, 409)) return false;
      throw translateStorageError(err, `writing a hit to ${partitionKey}`);
    }
  }

  async readMarker(partitionKey: string, idempotencyKey: string): Promise<Marker | undefined> {
    const table = await this.table();
    let raw: Record<string, unknown>;
    try {
      raw = await table.getEntity<Record<string, unknown>>(partitionKey, markerRowKey(idempotencyKey));
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading an idempotency marker in ${partitionKey}`);
    }
    if (typeof raw.op !== 'string') throw new AppError('CorruptState', `Idempotency marker in ${partitionKey} has no "op"`);
    return { op: raw.op, by: byOf(raw, `${partitionKey}/marker`) };
  }

  async readTotal(partitionKey: string): Promise<Total> {
    const table = await this.table();
    try {
      return parseTotal(partitionKey, await table.getEntity(partitionKey, totalRowKey));
    } catch (err) {
      if (hasStatus(err, 404)) return emptyTotal;
      throw translateStorageError(err, `reading the total of ${partitionKey}`);
    }
  }

  /**
   * Writes `next` (conditional on its ETag; created when it has none), with a marker in the same
   * transaction when given. `LostRace` when the total changed since it was read; `markerExists` when
   * the marker was already there (nothing was written).
   */
  async writeTotal(partitionKey: string, next: Total, marker?: MarkerWrite): Promise<TotalWrite> {
    const table = await this.table();
    try {
      if (marker === undefined) {
        const entity = totalEntity(partitionKey, totalRowKey, next);
        const response =
          next.etag === undefined ? await table.createEntity(entity) : await table.updateEntity(entity, 'Replace', { etag: next.etag });
        return { kind: 'written', etag: requireEtag(response.etag, partitionKey) };
      }
      const response = await table.submitTransaction([totalWrite(partitionKey, next), ['create', markerEntity(partitionKey, marker)]]);
      // Sub-responses come in the order of the actions; the total's write is the first.
      return { kind: 'written', etag: requireEtag(response.subResponses[0]?.etag, partitionKey) };
    } catch (err) {
      if (hasStatus(err, 412) || hasStatus(err, 404)) throw new LostRace(`the total of ${partitionKey} changed`);
      if (hasStatus(err, 409)) {
        // Either the total was created concurrently (a lost race) or the marker exists (a replay).
        if (marker !== undefined && (await this.readMarker(partitionKey, marker.idempotencyKey)) !== undefined)
          return { kind: 'markerExists' };
        throw new LostRace(`the total of ${partitionKey} was created concurrently`);
      }
      throw translateStorageError(err, `updating the total of ${partitionKey}`);
    }
  }

  /** Hit rows and then the total row, in one key range (markers sort after it and are not read). */
  async readPartition(partitionKey: string): Promise<PartitionRead> {
    const table = await this.table();
    const hits: HitRow[] = [];
    let total = emptyTotal;
    try {
      const rows = table.listEntities<Record<string, unknown>>({
        queryOptions: { filter: odata`PartitionKey eq ${partitionKey} and RowKey le ${totalRowKey}` },
      });
      for await (const row of rows) {
        if (row.rowKey === totalRowKey) total = parseTotal(partitionKey, row);
        else if (row.rowKey !== undefined && isHitRowKey(row.rowKey))
          hits.push({ rowKey: row.rowKey, by: byOf(row, `${partitionKey}/${row.rowKey}`) });
      }
    } catch (err) {
      throw translateStorageError(err, `reading ${partitionKey}`);
    }
    return { total, hits };
  }

  /** Up to `limit` hit rows stamped before the cutoff key, oldest first. */
  async hitsBefore(partitionKey: string, cutoffKey: string, limit: number): Promise<HitRow[]> {
    const table = await this.table();
    const hits: HitRow[] = [];
    try {
      const rows = table.listEntities<Record<string, unknown>>({
        queryOptions: { filter: odata`PartitionKey eq ${partitionKey} and RowKey lt ${cutoffKey}`, select: ['RowKey', 'b'] },
      });
      for await (const row of rows) {
        if (row.rowKey === undefined || !isHitRowKey(row.rowKey)) continue;
        hits.push({ rowKey: row.rowKey, by: byOf(row, `${partitionKey}/${row.rowKey}`) });
        if (hits.length >= limit) break;
      }
    } catch (err) {
      throw translateStorageError(err, `listing hits of ${partitionKey}`);
    }
    return hits;
  }

  /**
   * One fold step: deletes the hit rows and writes `next` in one entity-group transaction. Returns
   * the new ETag. Any conflict (the total changed, a hit is already gone) means another fold got
   * there first, and nothing was written: `LostRace`.
   */
  async fold(partitionKey: string, deletes: readonly string[], next: Total): Promise<string> {
    if (deletes.length + 1 > maxBatch) throw new RangeError(`a fold transaction holds at most ${maxBatch - 1} hits`);
    const table = await this.table();
    const actions: TransactionAction[] = deletes.map((rowKey) => ['delete', { partitionKey, rowKey }]);
    actions.push(totalWrite(partitionKey, next));
    try {
      const response = await table.submitTransaction(actions);
      return requireEtag(response.subResponses[actions.length - 1]?.etag, partitionKey);
    } catch (err) {
      if (hasStatus(err, 412) || hasStatus(err, 404) || hasStatus(err, 409)) throw new LostRace(`${partitionKey} was folded concurrently`);
      throw translateStorageError(err, `folding hits of ${partitionKey}`);
    }
  }

  /** RowKeys of idempotency markers that expired before `now`. */
  async expiredMarkers(partitionKey: string, now: number): Promise<string[]> {
    const table = await this.table();
    const found: string[] = [];
    try {
      const rows = table.listEntities<Record<string, unknown>>({
        queryOptions: {
          filter: odata`PartitionKey eq ${partitionKey} and RowKey gt ${totalRowKey} and RowKey lt ${markerRangeEnd} and x lt ${timeKey(now)}`,
          select: ['RowKey'],
        },
      });
      for await (const row of rows) if (row.rowKey !== undefined) found.push(row.rowKey);
    } catch (err) {
      throw translateStorageError(err, `listing expired idempotency markers of ${partitionKey}`);
    }
    return found;
  }

  /** Deletes rows in batches; rows already gone end the batch they were in without harm. */
  async deleteRows(partitionKey: string, rowKeys: readonly string[]): Promise<number> {
    const table = await this.table();
    let deleted = 0;
    for (let at = 0; at < rowKeys.length; at += maxBatch) {
      const chunk = rowKeys.slice(at, at + maxBatch);
      try {
        await table.submitTransaction(chunk.map((rowKey) => ['delete', { partitionKey, rowKey }]));
        deleted += chunk.length;
      } catch (err) {
        if (!hasStatus(err, 404)) throw translateStorageError(err, `deleting rows of ${partitionKey}`);
      }
    }
    return deleted;
  }

  /** Whether any data partition of `name` holds a row (hits, a total or a marker). */
  async hasData(name: string): Promise<boolean> {
    const table = await this.table();
    try {
      // '}' follows '|' in ASCII, and names cannot contain either: this range is exactly name|*.
      const pages = table
        .listEntities({
          queryOptions: { filter: odata`PartitionKey ge ${`${name}|`} and PartitionKey lt ${`${name}}`}`, select: ['RowKey'] },
        })
        .byPage({ maxPageSize: 1 });
      for await (const page of pages) if (page.length > 0) return true;
      return false;
    } catch (err) {
      throw translateStorageError(err, `checking whether counter ${name} has data`);
    }
  }
}

function requireEtag(etag: string | undefined, partitionKey: string): string {
  if (etag === undefined) throw new AppError('Internal', `Storage returned no ETag writing the total of ${partitionKey}`);
  return etag;
}
