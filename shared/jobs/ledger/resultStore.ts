/**
 * The `jobresults` table, one partition per job:
 *
 * - `r|<item>`: the item's result (succeeded with its output, or failed with a reason), written
 *   insert-if-absent, so a redelivered envelope changes nothing twice;
 * - `t|<round>|<sign>|<first item>`: a tally row written in the same entity-group transaction as the
 *   result rows it counts (`+`), or as the rows retry-failed re-opens (`-`). Progress is the sum of
 *   the tally rows, so it equals the number of final results after a crash at any point: there is
 *   no summary to bump after the fact. A tally key names an item that changes state once per round
 *   in that direction, so two commits can never share one;
 * - `x|<envelope>`: the last error of an envelope that failed, for the poison handler's reason.
 *
 * Every method is one storage round trip per page or batch.
 */
import { odata, type TableClient, type TransactionAction } from '@azure/data-tables';

import { AppError } from '../../errors';
import { hasStatus, translateStorageError } from '../../storage/errors';
import { listPage, type Page, type PageRequest } from '../../storage/list';
import {
  batches,
  errorRowKey,
  type ExistingRow,
  isOwed,
  isStatus,
  type ItemResult,
  maxRecordRounds,
  parseResult,
  type Progress,
  type RecordReport,
  resultEnd,
  resultEntity,
  resultPrefix,
  resultRowKey,
  type ResultStatus,
  rowsPerQuery,
  type StoredResult,
  tallyEnd,
  tallyPrefix,
  tallyRowKey,
} from './results';

export class ResultStore {
  constructor(
    private readonly table: () => Promise<TableClient>,
    private readonly now: () => number,
  ) {}

  /**
   * Records final results of round `round`: each item gets its row only if it has none yet (or has
   * one that this round re-opened), together with a tally row counting exactly the rows written.
   * `fresh` tries a plain insert first (one transaction in the common case); a conflict, or
   * `fresh = false`, reads the rows first and writes only what is missing.
   */
  async record(
    jobId: string,
    round: number,
    results: readonly ItemResult[],
    fresh: boolean,
    /** The rows as a listing just read them (a cancel), instead of reading them here. */
    known?: ReadonlyMap<string, ExistingRow>,
  ): Promise<RecordReport> {
    let pending = [...results];
    let recorded = 0;
    let alreadyFinal = 0;
    let conflicts = 0;
    for (let pass = 0; pending.length > 0; pass++) {
      if (pass >= maxRecordRounds) {
        throw new AppError('ConcurrencyExhausted', `Results of job ${jobId} keep changing under a concurrent writer`, {
          retryAfterSeconds: 1,
        });
      }
      const existing =
        pass === 0 && known !== undefined
          ? known
          : fresh && pass === 0
            ? new Map<string, ExistingRow>()
            : await this.readRows(
                jobId,
                pending.map((r) => r.id),
              );
      const writes: { result: ItemResult; etag: string | undefined }[] = [];
      for (const result of pending) {
        const row = existing.get(result.id);
        if (isOwed(row, round)) writes.push({ result, etag: row?.etag });
        else alreadyFinal++;
      }
      const lost: ItemResult[] = [];
      const at = this.now();
      for (const batch of batches(writes, (w) => JSON.stringify(w.result.output ?? '').length + (w.result.reason?.length ?? 0) + 400)) {
        const first = batch[0]?.result.id as string;
        const actions: TransactionAction[] = batch.map(({ result, etag }) =>
          etag === undefined
            ? ['create', resultEntity(jobId, round, result, at)]
            : ['update', resultEntity(jobId, round, result, at), 'Replace', { etag }],
        );
        const succeeded = batch.filter((w) => w.result.status === 'succeeded').length;
        const cancelled = batch.filter((w) => w.result.status === 'cancelled').length;
        actions.push([
          'create',
          {
            partitionKey: jobId,
            rowKey: tallyRowKey(round, '+', first),
            s: succeeded,
            f: batch.length - succeeded - cancelled,
            c: cancelled,
            at,
          },
        ]);
        try {
          await (await this.table()).submitTransaction(actions);
          recorded += batch.length;
        } catch (err) {
          if (!hasStatus(err, 409) && !hasStatus(err, 412) && !hasStatus(err, 404))
            throw translateStorageError(err, `recording results of job ${jobId}`);
          // Some row of the batch exists or changed: nothing of it was written; re-read and retry.
          conflicts++;
          lost.push(...batch.map((w) => w.result));
        }
      }
      pending = lost;
    }
    return { recorded, alreadyFinal, conflicts };
  }

  /** Status, round and ETag of the given items' rows (absent items are missing from the map). */
  async readRows(jobId: string, ids: readonly string[]): Promise<Map<string, ExistingRow>> {
    const found = new Map<string, ExistingRow>();
    const table = await this.table();
    for (let i = 0; i < ids.length; i += rowsPerQuery) {
      const keys = ids.slice(i, i + rowsPerQuery).map((id) => odata`RowKey eq ${resultRowKey(id)}`);
      try {
        const rows = table.listEntities<Record<string, unknown>>({
          queryOptions: { filter: `${odata`PartitionKey eq ${jobId}`} and (${keys.join(' or ')})`, select: ['RowKey', 's', 'round'] },
        });
        for await (const row of rows) {
          const status = row.s;
          if (!isStatus(status)) continue;
          found.set(String(row.rowKey).slice(resultPrefix.length), { status, round: Number(row.round ?? 0), etag: row.etag });
        }
      } catch (err) {
        throw translateStorageError(err, `reading results of job ${jobId}`);
      }
    }
    return found;
  }

  /** Every result row of the job (status, round, ETag), page after page: what a cancel leaves alone. */
  async allRows(jobId: string): Promise<Map<string, ExistingRow>> {
    const found = new Map<string, ExistingRow>();
    const table = await this.table();
    try {
      const rows = table.listEntities<Record<string, unknown>>({
        queryOptions: {
          filter: odata`PartitionKey eq ${jobId} and RowKey ge ${resultPrefix} and RowKey lt ${resultEnd}`,
          select: ['RowKey', 's', 'round'],
        },
      });
      for await (const row of rows) {
        if (isStatus(row.s))
          found.set(String(row.rowKey).slice(resultPrefix.length), { status: row.s, round: Number(row.round ?? 0), etag: row.etag });
      }
    } catch (err) {
      throw translateStorageError(err, `listing results of job ${jobId}`);
    }
    return found;
  }

  /** The sum of the job's tally rows: exactly the final results, whatever crashed when. */
  async progress(jobId: string): Promise<Progress> {
    const table = await this.table();
    let succeeded = 0;
    let failed = 0;
    let cancelled = 0;
    let firstAt: number | null = null;
    let lastAt: number | null = null;
    try {
      const rows = table.listEntities<Record<string, unknown>>({
        queryOptions: {
          filter: odata`PartitionKey eq ${jobId} and RowKey ge ${tallyPrefix} and RowKey lt ${tallyEnd}`,
          select: ['s', 'f', 'c', 'at'],
        },
      });
      for await (const row of rows) {
        succeeded += Number(row.s ?? 0);
        failed += Number(row.f ?? 0);
        cancelled += Number(row.c ?? 0);
        const at = Number(row.at ?? 0);
        firstAt = firstAt === null ? at : Math.min(firstAt, at);
        lastAt = lastAt === null ? at : Math.max(lastAt, at);
      }
    } catch (err) {
      throw translateStorageError(err, `reading the progress of job ${jobId}`);
    }
    return { succeeded, failed, cancelled, firstAt, lastAt };
  }

  /**
   * One page of results in item-id order, optionally of one status; `list` names the route asking
   * (results or failures), so a token of one serves only that one, for this job and status.
   */
  async page(
    jobId: string,
    list: 'results' | 'failures',
    status: ResultStatus | undefined,
    page: PageRequest,
  ): Promise<Page<StoredResult>> {
    const range = odata`PartitionKey eq ${jobId} and RowKey ge ${resultPrefix} and RowKey lt ${resultEnd}`;
    const query = {
      filter: status === undefined ? range : `${range} and ${odata`s eq ${status}`}`,
      list: `jobs/${jobId}/${list}?status=${status ?? ''}`,
      doing: `listing results of job ${jobId}`,
      strict: true,
    };
    return listPage(await this.table(), query, page, parseResult);
  }

  /** Every result of one status (all pages), with only the fields asked for parsed. */
  async *all(jobId: string, status: ResultStatus): AsyncGenerator<StoredResult> {
    const table = await this.table();
    const filter = `${odata`PartitionKey eq ${jobId} and RowKey ge ${resultPrefix} and RowKey lt ${resultEnd}`} and ${odata`s eq ${status}`}`;
    try {
      for await (const row of table.listEntities<Record<string, unknown>>({ queryOptions: { filter } })) yield parseResult(row);
    } catch (err) {
      throw translateStorageError(err, `reading results of job ${jobId}`);
    }
  }

  /**
   * Re-opens failed rows for round `round` (retry-failed): each batch turns its rows to `retrying`
   * and writes a negative tally in one transaction, so progress drops by exactly the rows re-opened.
   * Rows that are no longer failed (or changed) are left alone.
   */
  async reopen(jobId: string, round: number, ids: readonly string[]): Promise<number> {
    const rows = await this.readRows(jobId, ids);
    const targets = ids.filter((id) => rows.get(id)?.status === 'failed');
    let reopened = 0;
    const at = this.now();
    for (const batch of batches(targets, () => 1)) {
      const first = batch[0] as string;
      const actions: TransactionAction[] = batch.map((id) => [
        'update',
        { partitionKey: jobId, rowKey: resultRowKey(id), s: 'retrying', round, at },
        'Merge',
        { etag: rows.get(id)?.etag as string },
      ]);
      actions.push(['create', { partitionKey: jobId, rowKey: tallyRowKey(round, '-', first), s: 0, f: -batch.length, at }]);
      try {
        await (await this.table()).submitTransaction(actions);
        reopened += batch.length;
      } catch (err) {
        // 409: this batch was committed by an earlier attempt (its tally exists); 412: a row changed.
        if (!hasStatus(err, 409) && !hasStatus(err, 412)) throw translateStorageError(err, `re-opening failed results of job ${jobId}`);
      }
    }
    return reopened;
  }

  /** Deletes every row of the job's partition (results, tallies, errors), a transaction of up to 100 at a time. */
  async removeJob(jobId: string): Promise<number> {
    const table = await this.table();
    let removed = 0;
    try {
      const keys: string[] = [];
      for await (const row of table.listEntities<Record<string, unknown>>({
        queryOptions: { filter: odata`PartitionKey eq ${jobId}`, select: ['RowKey'] },
      })) {
        keys.push(String(row.rowKey));
      }
      for (let i = 0; i < keys.length; i += 100) {
        const actions: TransactionAction[] = keys.slice(i, i + 100).map((rowKey) => ['delete', { partitionKey: jobId, rowKey }]);
        await table.submitTransaction(actions);
        removed += actions.length;
      }
    } catch (err) {
      throw translateStorageError(err, `deleting the results of job ${jobId}`);
    }
    return removed;
  }

  /** A failed delivery: its count is the envelope's failed deliveries so far (work queue and lane), at least its dequeue count. */
  async recordEnvelopeError(jobId: string, envelope: string, why: string, dequeueCount: number): Promise<void> {
    const before = await this.envelopeError(jobId, envelope);
    const count = Math.max((before?.count ?? 0) + 1, dequeueCount);
    const table = await this.table();
    try {
      await table.upsertEntity(
        { partitionKey: jobId, rowKey: errorRowKey(envelope), why: why.slice(0, 2000), count, at: this.now() },
        'Replace',
      );
    } catch (err) {
      throw translateStorageError(err, `recording an envelope error of job ${jobId}`);
    }
  }

  async envelopeError(jobId: string, envelope: string): Promise<{ why: string; count: number } | undefined> {
    const table = await this.table();
    try {
      const row = await table.getEntity<Record<string, unknown>>(jobId, errorRowKey(envelope));
      return { why: typeof row.why === 'string' ? row.why : '', count: Number(row.count ?? 0) };
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading an envelope error of job ${jobId}`);
    }
  }
}
