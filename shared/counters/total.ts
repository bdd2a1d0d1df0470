/**
 * A partition's total row: the rolled-up summary in `hits` mode, the shard itself in `sharded`
 * mode. Every write is conditional on its ETag and bumps `version`, and the ids of the last few
 * writes are kept in the row: a writer whose response was lost (the SDK then retries and gets 412)
 * re-reads and finds out whether its own write landed, instead of applying it a second time.
 */
import type { TableEntity } from '@azure/data-tables';
import * as z from 'zod';

import { AppError } from '../errors';
import { zodIssues } from '../http/route';

export const opRingSize = 32;

export interface Total {
  readonly count: number;
  readonly version: number;
  /** Ids of the last `opRingSize` writes, oldest first. */
  readonly ops: readonly string[];
  /**
   * RowKey of the newest hit folded into `count` ('' before the first fold). A hit row at or below
   * it that is still present was not folded (it arrived late): reads that trust the watermark skip
   * it, the next rollup folds it.
   */
  readonly watermark: string;
  /** The cutoff (ms) of the last rollup that folded hits here. */
  readonly rolledTo: number | undefined;
  /** When expired idempotency markers of this partition were last deleted (ms). */
  readonly sweptAt: number | undefined;
  /** The row's ETag; undefined while the row does not exist (the first write creates it). */
  readonly etag: string | undefined;
}

export const emptyTotal: Total = {
  count: 0,
  version: 0,
  ops: [],
  watermark: '',
  rolledTo: undefined,
  sweptAt: undefined,
  etag: undefined,
};

const int64 = z
  .union([z.bigint(), z.number()])
  .transform((v) => Number(v))
  .pipe(z.int());

const storedTotal = z.object({
  etag: z.string(),
  c: int64,
  v: int64.pipe(z.int().min(0)),
  ops: z.string().default(''),
  wm: z.string().default(''),
  rt: int64.optional(),
  sw: int64.optional(),
});

export function parseTotal(partitionKey: string, raw: unknown): Total {
  const parsed = storedTotal.safeParse(raw);
  if (!parsed.success) {
    throw new AppError('CorruptState', `The total row of counter partition "${partitionKey}" is corrupt; it was left unchanged.`, {
      issues: zodIssues(parsed.error, 'stored'),
      extra: { partition: partitionKey },
    });
  }
  const e = parsed.data;
  return {
    count: e.c,
    version: e.v,
    ops: e.ops === '' ? [] : e.ops.split(' '),
    watermark: e.wm,
    rolledTo: e.rt,
    sweptAt: e.sw,
    etag: e.etag,
  };
}

export function totalEntity(partitionKey: string, rowKey: string, total: Total): TableEntity {
  return {
    partitionKey,
    rowKey,
    c: BigInt(total.count),
    v: BigInt(total.version),
    ops: total.ops.join(' '),
    wm: total.watermark,
    ...(total.rolledTo === undefined ? {} : { rt: BigInt(total.rolledTo) }),
    ...(total.sweptAt === undefined ? {} : { sw: BigInt(total.sweptAt) }),
  };
}

export interface Change {
  readonly delta: number;
  readonly opId: string;
  /** Set by a fold: the newest folded RowKey and the fold's cutoff. */
  readonly watermark?: string;
  readonly rolledTo?: number;
  readonly sweptAt?: number;
}

/** The total after `change`; its ETag is still the one the write must be conditional on. */
export function applyChange(total: Total, change: Change): Total {
  const count = total.count + change.delta;
  if (!Number.isSafeInteger(count)) {
    throw new AppError('Conflict', `The counter would leave the exactly representable range (±${Number.MAX_SAFE_INTEGER})`);
  }
  return {
    count,
    version: total.version + 1,
    ops: [...total.ops, change.opId].slice(-opRingSize),
    watermark: change.watermark !== undefined && change.watermark > total.watermark ? change.watermark : total.watermark,
    rolledTo: change.rolledTo === undefined ? total.rolledTo : Math.max(change.rolledTo, total.rolledTo ?? 0),
    sweptAt: change.sweptAt ?? total.sweptAt,
    etag: total.etag,
  };
}

export type WriteOutcome = 'applied' | 'notApplied' | 'unknown';

/**
 * Whether write `opId`, attempted on the version `basedOn`, is in `current`. It would have become
 * version `basedOn + 1`; the ring remembers the last `opRingSize` versions, so when that version is
 * still in the ring its absence proves the write did not land. Older than the ring: unknown.
 */
export function writeOutcome(current: Total, opId: string, basedOn: number): WriteOutcome {
  if (current.ops.includes(opId)) return 'applied';
  if (current.version <= basedOn) return 'notApplied';
  const oldestRemembered = current.version - current.ops.length + 1;
  return basedOn + 1 >= oldestRemembered ? 'notApplied' : 'unknown';
}
