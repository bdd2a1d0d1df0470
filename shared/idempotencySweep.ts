/**
 * Expired `Idempotency-Key` rows are only overwritten when their key comes back, so without a sweep
 * the table grows forever. The sweep finds expired rows (reading only keys, expiry and ETag, never
 * the stored responses) and deletes each one conditional on the ETag it saw, so a row a request
 * re-used meanwhile is kept. One request per row rather than entity-group batches: the SDK's batches
 * delete unconditionally, and this is background work of at most a few thousand cheap requests an
 * hour. Work per run is bounded; what is left is the next run's. Two sweeps racing each other are
 * harmless (a row already gone counts as gone).
 */
import type { TableClient } from '@azure/data-tables';

import type { Clock } from './clock';
import type { Logger } from './log';
import { mapLimited } from './mapLimited';
import { hasStatus, translateStorageError } from './storage/errors';

export interface SweepReport {
  /** Expired rows found (at most `maxRows`). */
  readonly expired: number;
  readonly deleted: number;
  /** Rewritten by a request since the sweep read them, so kept. */
  readonly kept: number;
  /** Deleted by someone else (another sweep) first. */
  readonly gone: number;
  /** More expired rows may remain: the run stopped at `maxRows`. */
  readonly truncated: boolean;
}

/** Rows one run deletes at most, so a large backlog is worked off over several runs. */
const defaultSweepMaxRows = 5000;

/** Deletes in flight at once: enough to finish a full run in seconds, not enough to crowd requests out. */
const deleteConcurrency = 8;

export interface RowVersion {
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly etag: string;
}

/** Up to `limit` rows whose expiry is before `now`, as keys and ETags. */
export async function findExpired(table: TableClient, now: number, limit: number): Promise<RowVersion[]> {
  const rows: RowVersion[] = [];
  // expiresAt is stored as a Double (epoch milliseconds): compare with a Double literal.
  const filter = `expiresAt lt ${now.toFixed(1)}`;
  try {
    const pages = table
      .listEntities<{ expiresAt: number }>({ queryOptions: { filter, select: ['PartitionKey', 'RowKey', 'expiresAt'] } })
      .byPage({ maxPageSize: 1000 });
    for await (const page of pages) {
      for (const e of page) {
        if (rows.length >= limit) return rows;
        if (e.partitionKey !== undefined && e.rowKey !== undefined)
          rows.push({ partitionKey: e.partitionKey, rowKey: e.rowKey, etag: e.etag });
      }
    }
  } catch (err) {
    throw translateStorageError(err, `listing expired rows of table ${table.tableName}`);
  }
  return rows;
}

/** Deletes `rows`, each only if its ETag still matches. */
export async function deleteExpired(table: TableClient, rows: readonly RowVersion[]): Promise<Omit<SweepReport, 'expired' | 'truncated'>> {
  const outcomes = await mapLimited(rows, deleteConcurrency, async (row): Promise<'deleted' | 'kept' | 'gone'> => {
    try {
      await table.deleteEntity(row.partitionKey, row.rowKey, { etag: row.etag });
      return 'deleted';
    } catch (err) {
      if (hasStatus(err, 412)) return 'kept';
      if (hasStatus(err, 404)) return 'gone';
      throw translateStorageError(err, `deleting from table ${table.tableName}`);
    }
  });
  const count = (what: string): number => outcomes.filter((o) => o === what).length;
  return { deleted: count('deleted'), kept: count('kept'), gone: count('gone') };
}

export async function sweepIdempotency(table: TableClient, clock: Clock, maxRows = defaultSweepMaxRows): Promise<SweepReport> {
  // One row more than the bound tells whether anything is left for the next run.
  const found = await findExpired(table, clock.now(), maxRows + 1);
  const truncated = found.length > maxRows;
  const rows = truncated ? found.slice(0, maxRows) : found;
  return { expired: rows.length, truncated, ...(await deleteExpired(table, rows)) };
}

/** The timer's run: the app's idempotency table, logged when it did anything. */
export async function runIdempotencySweep(table: TableClient, clock: Clock, logger: Logger): Promise<SweepReport> {
  const report = await sweepIdempotency(table, clock);
  if (report.expired > 0) logger.log('info', 'idempotency.swept', { ...report });
  return report;
}
