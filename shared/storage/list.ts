/**
 * Every list the API answers, one page at a time: a filtered table query read with the storage
 * service's own continuation (NextPartitionKey/NextRowKey), handed to the caller as an opaque token
 * bound to the list it was issued for. The filter is applied to every page, so a token — even a
 * forged one — can only move the start of a page within the list the caller asked for; the binding
 * turns a token of another list (or of the same list with other filters) into a clear 400.
 * Each row is parsed on its own, so one that cannot be read is reported by name instead of failing
 * the whole page.
 */
import { createHash } from 'node:crypto';

import type { TableClient, TableEntityResult } from '@azure/data-tables';
import * as z from 'zod';

import { AppError } from '../errors';
import { hasStatus, translateStorageError } from './errors';

export interface Unreadable {
  readonly name: string;
  readonly detail: string;
}

export interface PageRequest {
  readonly maxPageSize: number;
  readonly continuationToken?: string | undefined;
}

export interface Page<T> {
  readonly items: T[];
  readonly unreadable: Unreadable[];
  /** Where the next page starts; absent on the last page. */
  readonly continuationToken?: string;
}

export interface ListQuery {
  readonly filter: string;
  /** Names the list and every filter the caller chose (e.g. `jobs/<id>/results?status=failed`): a token serves only that list. */
  readonly list: string;
  /** For error messages: "listing gates". */
  readonly doing: string;
  /** A row that cannot be parsed fails the page (lists that do not report `unreadable`). */
  readonly strict?: boolean;
}

/**
 * Storage round trips one page may take. The service may answer a page with fewer rows than asked
 * (or none, with a continuation, on a scan across partitions); reading on fills the page, and the
 * bound keeps one request's latency bounded — the caller gets a short page with a token instead.
 */
const maxRoundTrips = 5;

const tokenPattern = /^[A-Za-z0-9_-]{1,2048}$/;
/** The storage service's keys for where to resume; opaque, but never control characters. */
const storageKey = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^[^\p{Cc}]+$/u);
const tokenBody = z.strictObject({ v: z.literal(1), l: z.string().length(16), p: storageKey, r: storageKey.optional() });

function bindingOf(list: string): string {
  return createHash('sha256').update(list).digest('base64url').slice(0, 16);
}

function invalidToken(message: string): AppError {
  return new AppError('ValidationFailed', 'The continuation token is not valid for this list', {
    issues: [{ path: 'query.continuationToken', message }],
  });
}

/** The storage SDK's token (base64 of `{ nextPartitionKey, nextRowKey }`) for the caller's token, checked strictly. */
function storageTokenOf(token: string, list: string): string {
  if (!tokenPattern.test(token)) throw invalidToken('Pass back the continuationToken a page gave, unchanged');
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalidToken('Pass back the continuationToken a page gave, unchanged');
  }
  const parsed = tokenBody.safeParse(decoded);
  if (!parsed.success) throw invalidToken('Pass back the continuationToken a page gave, unchanged');
  if (parsed.data.l !== bindingOf(list)) throw invalidToken('The token was issued for another list or other filters');
  const next = { nextPartitionKey: parsed.data.p, ...(parsed.data.r === undefined ? {} : { nextRowKey: parsed.data.r }) };
  return Buffer.from(JSON.stringify(next)).toString('base64');
}

const storageToken = z.object({ nextPartitionKey: z.string().min(1), nextRowKey: z.string().min(1).optional() });

/** The caller's token for the storage SDK's one. */
function tokenOf(storage: string, list: string): string {
  const next = storageToken.parse(JSON.parse(Buffer.from(storage, 'base64').toString('utf8')));
  return Buffer.from(JSON.stringify({ v: 1, l: bindingOf(list), p: next.nextPartitionKey, r: next.nextRowKey })).toString('base64url');
}

async function readOnePage<E extends object>(
  table: TableClient,
  query: ListQuery,
  maxPageSize: number,
  continuationToken: string | undefined,
  callerToken: boolean,
): Promise<{ rows: TableEntityResult<E>[]; next: string | undefined }> {
  try {
    const pages = table
      .listEntities<E>({ queryOptions: { filter: query.filter } })
      .byPage({ maxPageSize, ...(continuationToken === undefined ? {} : { continuationToken }) });
    const first = await pages.next();
    if (first.done === true) return { rows: [], next: undefined };
    return { rows: first.value, next: first.value.continuationToken };
  } catch (err) {
    // The storage service refuses a resume position it cannot read (only a caller's token gives one).
    if (callerToken && hasStatus(err, 400)) throw invalidToken('The token does not name a position in this list');
    throw translateStorageError(err, query.doing);
  }
}

/** One page of `query`: at most `page.maxPageSize` rows, parsed with `parse`. */
export async function listPage<T, E extends object = Record<string, unknown>>(
  table: TableClient,
  query: ListQuery,
  page: PageRequest,
  parse: (row: TableEntityResult<E>) => T,
): Promise<Page<T>> {
  const items: T[] = [];
  const unreadable: Unreadable[] = [];
  const take = (row: TableEntityResult<E>): void => {
    try {
      items.push(parse(row));
    } catch (err) {
      if (query.strict === true) throw err;
      unreadable.push({ name: row.partitionKey ?? '', detail: err instanceof Error ? err.message : String(err) });
    }
  };
  const given = page.continuationToken === undefined ? undefined : storageTokenOf(page.continuationToken, query.list);
  let next = given;
  for (let trip = 0; trip < maxRoundTrips; trip++) {
    const read = await readOnePage<E>(table, query, page.maxPageSize - items.length - unreadable.length, next, given !== undefined);
    read.rows.forEach(take);
    next = read.next;
    if (next === undefined || items.length + unreadable.length >= page.maxPageSize) break;
  }
  return { items, unreadable, ...(next === undefined ? {} : { continuationToken: tokenOf(next, query.list) }) };
}
