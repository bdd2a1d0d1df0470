/**
 * A job's result rows as the `jobresults` table holds them (./resultStore.ts reads and writes them):
 * an item's final result (`r|<item>`), the tallies that count them (`t|<round>|<sign>|<first item>`)
 * and an envelope's last error (`x|<envelope>`), their keys and limits, and the rule that a final
 * result is never written twice.
 */
import { AppError } from '../../errors';
import type { JsonValue } from '../envelopes/envelope';

type FinalStatus = 'succeeded' | 'failed' | 'cancelled';
export type ResultStatus = FinalStatus | 'retrying';

/** A final outcome of an item, as the worker records it. */
export interface ItemResult {
  readonly id: string;
  readonly status: FinalStatus;
  readonly output?: JsonValue;
  readonly code?: string;
  readonly reason?: string;
  readonly attempts: number;
  readonly envelope: string;
  readonly payloadSha256?: string;
  readonly payloadBytes?: number;
  readonly claimCheck: boolean;
}

export interface StoredResult extends Omit<ItemResult, 'status'> {
  readonly status: ResultStatus;
  readonly round: number;
  readonly at: number;
}

export interface Progress {
  readonly succeeded: number;
  readonly failed: number;
  readonly cancelled: number;
  /** When the first and the latest tally was written (ms), null without any. */
  readonly firstAt: number | null;
  readonly lastAt: number | null;
}

export interface RecordReport {
  /** Results written now. */
  readonly recorded: number;
  /** Results that were already final (a redelivery, or another path got there first). */
  readonly alreadyFinal: number;
  /** Batches that lost to a concurrent writer and were re-read. */
  readonly conflicts: number;
}

/** Largest output of one item, as JSON (a table property holds 32K characters). */
export const maxOutputChars = 30_000;
/** Longest failure reason kept with a result. */
export const maxReasonChars = 1000;

export const resultPrefix = 'r|';
export const tallyPrefix = 't|';
/** RowKey range ends: `}` sorts right after `|`. */
export const resultEnd = 'r}';
export const tallyEnd = 't}';
/** An entity-group transaction holds 100 operations: 99 results and their tally. */
const maxBatchResults = 99;
/** Stay well below the 4 MiB transaction limit. */
const maxBatchChars = 3_000_000;
/** One query may hold 15 comparisons: the PartitionKey and 14 RowKeys. */
export const rowsPerQuery = 14;
export const maxRecordRounds = 5;

export const resultRowKey = (item: string): string => `${resultPrefix}${item}`;
export const tallyRowKey = (round: number, sign: '+' | '-', first: string): string => `${tallyPrefix}${round}|${sign}|${first}`;
export const errorRowKey = (envelope: string): string => `x|${envelope}`;

type Entity = Record<string, unknown> & { partitionKey: string; rowKey: string };

export function resultEntity(jobId: string, round: number, r: ItemResult, at: number): Entity {
  return {
    partitionKey: jobId,
    rowKey: resultRowKey(r.id),
    s: r.status,
    o: r.output === undefined ? '' : JSON.stringify(r.output),
    code: r.code ?? '',
    why: r.reason ?? '',
    a: r.attempts,
    e: r.envelope,
    h: r.payloadSha256 ?? '',
    b: r.payloadBytes ?? -1,
    cc: r.claimCheck,
    round,
    at,
  };
}

export function parseResult(raw: Record<string, unknown>): StoredResult {
  const rowKey = String(raw.rowKey);
  const status = raw.s;
  if (!isStatus(status)) throw new AppError('CorruptState', `Result ${rowKey} has status ${String(status)}`);
  const text = (key: string): string | undefined => {
    const value = raw[key];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const output = text('o');
  const bytes = typeof raw.b === 'number' && raw.b >= 0 ? raw.b : undefined;
  return {
    id: rowKey.slice(resultPrefix.length),
    status,
    ...(output === undefined ? {} : { output: JSON.parse(output) as JsonValue }),
    ...(text('code') === undefined ? {} : { code: text('code') }),
    ...(text('why') === undefined ? {} : { reason: text('why') }),
    attempts: Number(raw.a ?? 0),
    envelope: text('e') ?? '',
    ...(text('h') === undefined ? {} : { payloadSha256: text('h') }),
    ...(bytes === undefined ? {} : { payloadBytes: bytes }),
    claimCheck: raw.cc === true,
    round: Number(raw.round ?? 0),
    at: Number(raw.at ?? 0),
  };
}

export function isStatus(value: unknown): value is ResultStatus {
  return value === 'succeeded' || value === 'failed' || value === 'cancelled' || value === 'retrying';
}

/** Final results counted: succeeded, failed and cancelled. */
export function settledCount(p: Pick<Progress, 'succeeded' | 'failed' | 'cancelled'>): number {
  return p.succeeded + p.failed + p.cancelled;
}

export interface ExistingRow {
  readonly status: ResultStatus;
  readonly round: number;
  readonly etag: string;
}

/**
 * Whether an item still owes its final result of `round`: it has no row, or a row retry-failed
 * re-opened for this round (or an earlier one). A final row is never written again.
 */
export function isOwed(row: ExistingRow | undefined, round: number): boolean {
  return row === undefined || (row.status === 'retrying' && row.round <= round);
}

/** Splits writes into transactions by count and size. */
export function batches<T>(items: readonly T[], size: (item: T) => number): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let chars = 0;
  for (const item of items) {
    const n = size(item);
    if (current.length > 0 && (current.length >= maxBatchResults || chars + n > maxBatchChars)) {
      out.push(current);
      current = [];
      chars = 0;
    }
    current.push(item);
    chars += n;
  }
  if (current.length > 0) out.push(current);
  return out;
}
