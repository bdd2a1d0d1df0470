/**
 * Every durable name the streams capability uses, defined once: the writer and ledger entities,
 * their operations, the flusher orchestration, its activities and its wake-up event. Entity
 * references are plain objects shaped like durable-functions' `EntityId` (shared/ may import its
 * types only); the library reads nothing but `name` and `key` from them.
 */
import type { EntityId } from 'durable-functions';

import { entityId, entityName, type EntityRef } from '../durable/entities';
import { appInstanceId } from '../names';

export const streamsDurable = {
  /** The single writer of one (partition, resource): buffer, dedup marks, log cursor. */
  writerEntity: entityName('streamwriter'),
  /** A small projection of the writer that HTTP handlers poll (receipts, depth, flushed-through). */
  ledgerEntity: entityName('streamledger'),
  /** One eternal orchestration per writer: decides and performs flushes (entities cannot do I/O). */
  flusher: 'streamsFlusher',
  /** Appends one batch to the writer's append blob (idempotent by append position). */
  appendActivity: 'streamsAppendBatch',
  /** Picks the blob a fresh writer starts its log in (after any blob already there). */
  openActivity: 'streamsOpenLog',
  /** Raised on the flusher when a writer's buffer became non-empty, reached N, or must flush now. */
  kickEvent: 'kick',
} as const;

export const writerOps = {
  append: 'append',
  plan: 'plan',
  opened: 'opened',
  flushed: 'flushed',
  flushFailed: 'flushFailed',
  requestFlush: 'requestFlush',
  release: 'release',
  adopt: 'adopt',
  /** The writer's signal to itself: a later batch, which tells the receipts an earlier one held. */
  settle: 'settle',
} as const;

export const ledgerOps = { report: 'report' } as const;

/** The identity of one writer: a resource inside a partition. */
export interface WriterAddress {
  readonly partition: string;
  readonly resource: string;
}

/** `partition:resource`. Neither part may contain `:` (both are validated names), so it splits back. */
export function writerKey(address: WriterAddress): string {
  return `${address.partition}:${address.resource}`;
}

export function parseWriterKey(key: string): WriterAddress {
  const at = key.indexOf(':');
  if (at <= 0 || at === key.length - 1) throw new Error(`Not a stream writer key: ${key}`);
  return { partition: key.slice(0, at), resource: key.slice(at + 1) };
}

export function writerEntity(key: string): EntityId & EntityRef {
  return entityId(streamsDurable.writerEntity, key);
}

export function ledgerEntity(key: string): EntityId & EntityRef {
  return entityId(streamsDurable.ledgerEntity, key);
}

/**
 * The flusher's instance id: stable per writer, so "start if not running" needs no lookup table, and
 * in the app's own form (`streams:flusher:<partition>:<resource>`, shared/names.ts), which no
 * schedule id can take: a schedule of that id would otherwise be the writer's "running flusher".
 */
export function flusherInstanceId(key: string): string {
  const { partition, resource } = parseWriterKey(key);
  return appInstanceId('streams', 'flusher', partition, resource);
}

/**
 * The id flushers had before (a valid schedule id, hence the change). A flusher started under it
 * keeps flushing its writer until it retires idle; a new one starts under `flusherInstanceId`
 * beside it, which is safe because the writer hands both the same batch and an append is
 * idempotent by position. Nothing is started under this id any more.
 */
export function legacyFlusherInstanceId(key: string): string {
  return `streams-flusher-${key.replace(':', '--')}`;
}

/** Blob name of the writer's `seq`-th log file: `<partition>/<resource>/<seq, 6 digits>.ndjson`. */
export function logBlobName(address: WriterAddress, seq: number): string {
  return `${address.partition}/${address.resource}/${String(seq).padStart(6, '0')}.ndjson`;
}

export function logBlobPrefix(address: WriterAddress): string {
  return `${address.partition}/${address.resource}/`;
}
