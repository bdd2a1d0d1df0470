/**
 * How counter data is keyed in tables. Everything here is pure so the ordering rules the rollup's
 * correctness rests on can be tested exhaustively.
 *
 * Data partition `name|NN` (one per shard, NN = 00…99) holds, in RowKey order:
 *   1. hit rows `TTTTTTTTTTTTT-iiiiiiiiii-ssssss` (13-digit ms time, instance, sequence): digits first;
 *   2. the partition's total row `~sum` (the summary, or the shard entity in `sharded` mode);
 *   3. idempotency markers `~~<hash>`.
 * So "hits, then the total" is one contiguous key range (`RowKey le '~sum'`), and the markers, which
 * can be numerous, are never scanned by reads.
 */
import { createHash } from 'node:crypto';

import type { Random } from '../clock';

export const maxPartitions = 100;

/** RowKey of a partition's total row; sorts after every hit row and before every marker. */
export const totalRowKey = '~sum';
const markerPrefix = '~~';

/** The first RowKey after every marker of a partition ('~' is the last printable ASCII character). */
export const markerRangeEnd = '~~~';

export function dataPartitionKey(name: string, index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= maxPartitions) throw new RangeError(`partition ${index} out of range`);
  return `${name}|${String(index).padStart(2, '0')}`;
}

/** The inverse of `dataPartitionKey`; undefined when `key` is not one. */
export function parseDataPartitionKey(key: string): { name: string; index: number } | undefined {
  const match = /^(.+)\|(\d{2})$/.exec(key);
  if (match?.[1] === undefined || match[2] === undefined) return undefined;
  return { name: match[1], index: Number(match[2]) };
}

const timeDigits = 13;

/** Milliseconds as a fixed-width string, so string order is time order (until the year 2286). */
export function timeKey(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms >= 10 ** timeDigits) throw new RangeError(`time ${ms} cannot be keyed`);
  return String(ms).padStart(timeDigits, '0');
}

export function isHitRowKey(rowKey: string): boolean {
  return /^\d{13}-/.test(rowKey);
}

/** The writer's timestamp a hit row carries. */
export function hitTime(rowKey: string): number {
  if (!isHitRowKey(rowKey)) throw new RangeError(`${rowKey} is not a hit row key`);
  return Number(rowKey.slice(0, timeDigits));
}

/**
 * Every hit row stamped before `ms` sorts before this key, and every hit stamped at or after it
 * sorts after: a hit key is the time key followed by '-', so it is longer than the bare time key.
 */
export function hitsBefore(ms: number): string {
  return timeKey(ms);
}

/**
 * Makes hit RowKeys that order by time and never repeat: the instance part is random per process
 * and the sequence part counts within it, so no two writers (or two attempts) share a key. That is
 * what lets an insert that comes back 409 be read as "my own earlier attempt landed".
 */
export class HitKeys {
  readonly instance: string;
  private seq = 0;

  constructor(random: Random) {
    let instance = '';
    for (let i = 0; i < 10; i++) instance += Math.floor(random() * 36).toString(36);
    this.instance = instance;
  }

  next(ms: number): string {
    this.seq = (this.seq + 1) % 36 ** 6;
    return `${timeKey(ms)}-${this.instance}-${this.seq.toString(36).padStart(6, '0')}`;
  }
}

function digest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The marker row of an Idempotency-Key; any printable key becomes a safe, fixed-length RowKey. */
export function markerRowKey(idempotencyKey: string): string {
  return `${markerPrefix}${digest(idempotencyKey).slice(0, 40)}`;
}

/** A keyed increment always lands in the same partition, so its retry finds the first one's marker. */
export function keyedPartition(idempotencyKey: string, partitions: number): number {
  return Number.parseInt(digest(idempotencyKey).slice(40, 48), 16) % partitions;
}

/** Dirty-index buckets: a writer marks (bucket of the hit's time, partition) once per bucket. */
export const bucketMs = 60_000;

export function bucketStart(ms: number): number {
  return Math.floor(ms / bucketMs) * bucketMs;
}

export function bucketPartitionKey(ms: number): string {
  return `b${timeKey(bucketStart(ms))}`;
}

export function parseBucketPartitionKey(key: string): number | undefined {
  const match = /^b(\d{13})$/.exec(key);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}
