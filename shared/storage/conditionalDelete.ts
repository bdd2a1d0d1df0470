/**
 * ETag-conditional deletes in one entity-group transaction. `TableClient.submitTransaction` sends
 * every delete with `If-Match: *` (it drops the options of a delete action), so a row rewritten after
 * it was read would be deleted anyway; this builds the `$batch` request itself, with each row's ETag,
 * and sends it through the client's own pipeline (authentication, retries, observers).
 */
import { randomUUID } from 'node:crypto';

import type { TableClient } from '@azure/data-tables';
import { createDefaultHttpClient, createPipelineRequest } from '@azure/core-rest-pipeline';

import { AppError } from '../errors';
import { hasStatus, translateStorageError } from './errors';

export interface RowVersion {
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly etag: string;
}

/** What became of each row: deleted, kept (rewritten since it was read: 412) or already gone (404). */
export interface DeleteOutcome {
  readonly deleted: number;
  readonly kept: number;
  readonly gone: number;
}

/** The service's limit for one entity-group transaction. */
export const maxBatchRows = 100;

const httpClient = createDefaultHttpClient();

function keyLiteral(key: string): string {
  return encodeURIComponent(key.replace(/'/g, "''"));
}

/**
 * Deletes up to 100 rows of one partition, each only if its ETag still matches, as one transaction.
 * The transaction is all-or-nothing: if any row changed or vanished, it deletes none, and each row
 * is then deleted on its own (still conditionally), so one rewritten row keeps only itself.
 */
export async function deleteIfUnchanged(table: TableClient, rows: readonly RowVersion[]): Promise<DeleteOutcome> {
  if (rows.length === 0) return { deleted: 0, kept: 0, gone: 0 };
  const partition = rows[0]?.partitionKey;
  if (rows.length > maxBatchRows || rows.some((r) => r.partitionKey !== partition)) {
    throw new AppError('Internal', `A conditional delete batch holds at most ${maxBatchRows} rows of one partition`);
  }
  if (await submitBatch(table, rows)) return { deleted: rows.length, kept: 0, gone: 0 };
  const counts = { deleted: 0, kept: 0, gone: 0 };
  for (const row of rows) {
    try {
      await table.deleteEntity(row.partitionKey, row.rowKey, { etag: row.etag });
      counts.deleted++;
    } catch (err) {
      if (hasStatus(err, 412)) counts.kept++;
      else if (hasStatus(err, 404)) counts.gone++;
      else throw translateStorageError(err, `deleting from table ${table.tableName}`);
    }
  }
  return counts;
}

/** True when every delete was applied; false when the transaction was refused (a 412 or 404 inside). */
async function submitBatch(table: TableClient, rows: readonly RowVersion[]): Promise<boolean> {
  const batch = `batch_${randomUUID()}`;
  const changeset = `changeset_${randomUUID()}`;
  const base = table.url.replace(/\/+$/, '');
  const parts = rows.map((row) =>
    [
      `--${changeset}`,
      'Content-Type: application/http',
      'Content-Transfer-Encoding: binary',
      '',
      `DELETE ${base}/${table.tableName}(PartitionKey='${keyLiteral(row.partitionKey)}',RowKey='${keyLiteral(row.rowKey)}') HTTP/1.1`,
      'Accept: application/json;odata=minimalmetadata',
      'DataServiceVersion: 3.0',
      `If-Match: ${row.etag}`,
      '',
      '',
    ].join('\r\n'),
  );
  const body = [
    `--${batch}`,
    `Content-Type: multipart/mixed; boundary=${changeset}`,
    '',
    ...parts,
    `--${changeset}--`,
    `--${batch}--`,
    '',
  ].join('\r\n');
  const request = createPipelineRequest({
    url: `${base}/$batch`,
    method: 'POST',
    body,
    // The client already chose to talk plain HTTP (Azurite); the raw request follows its URL.
    allowInsecureConnection: base.startsWith('http:'),
  });
  request.headers.set('Content-Type', `multipart/mixed; boundary=${batch}`);
  request.headers.set('Accept', 'application/json');
  request.headers.set('DataServiceVersion', '3.0');
  request.headers.set('MaxDataServiceVersion', '3.0;NetFx');
  request.headers.set('x-ms-version', '2019-02-02');
  let response;
  try {
    response = await table.pipeline.sendRequest(httpClient, request);
  } catch (err) {
    throw translateStorageError(err, `deleting from table ${table.tableName}`);
  }
  const text = response.bodyAsText ?? '';
  if (response.status !== 202) {
    throw new AppError('DependencyUnavailable', `Storage answered ${response.status} to a delete batch on table ${table.tableName}`, {
      retryAfterSeconds: 1,
    });
  }
  // A refused changeset answers with the one failing operation's status; an applied one with 204s.
  const statuses = [...text.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));
  if (statuses.length > 0 && statuses.every((s) => s === 204)) return true;
  if (statuses.some((s) => s === 412 || s === 404)) return false;
  throw new AppError('DependencyUnavailable', `Storage refused a delete batch on table ${table.tableName}: ${statuses.join(', ')}`, {
    retryAfterSeconds: 1,
  });
}
