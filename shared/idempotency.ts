/**
 * Idempotency keys: the first response to a keyed request is stored (with an expiry) and a retry
 * with the same key gets it back instead of doing the work again. Keys are scoped (e.g. per
 * sequence), hashed into the RowKey so any printable key is safe, and values are split over several
 * properties because one table string property holds at most 32K characters.
 */
import { createHash } from 'node:crypto';

import type { TableClient } from '@azure/data-tables';

import type { Clock } from './clock';
import { AppError } from './errors';
import { hasStatus, translateStorageError } from './storage/errors';

const chunkChars = 30_000;
const maxChunks = 30;

interface StoredEntity {
  partitionKey: string;
  rowKey: string;
  expiresAt: number;
  chunks: number;
  [chunk: `v${number}`]: string;
}

/**
 * An Idempotency-Key as one caller's: two callers (Caller ids) who choose the same key name two
 * requests, so neither replays, and so neither reads nor swallows, the other's (as job ids are per
 * owner, shared/jobs/submit/jobIds.ts). No caller named: the key as sent.
 */
export function callerKey(key: string | undefined, caller: string | undefined): string | undefined {
  return key === undefined || caller === undefined ? key : `${caller}\n${key}`;
}

export class IdempotencyStore {
  constructor(
    private readonly table: () => Promise<TableClient>,
    private readonly clock: Clock,
    private readonly ttlSeconds: number,
  ) {}

  /**
   * Returns the stored response for `key` in `scope`, or computes, stores and returns a new one.
   * When two requests with the same key race, both compute but both return the one stored first.
   */
  async run<T>(scope: string, key: string | undefined, compute: () => Promise<T>): Promise<T> {
    if (key === undefined) return compute();
    const rowKey = createHash('sha256').update(key).digest('hex');
    const table = await this.table();
    const existing = await this.read<T>(table, scope, rowKey);
    if (existing?.live === true) return existing.value;
    const value = await compute();
    const text = JSON.stringify(value);
    if (text.length > chunkChars * maxChunks) throw new AppError('Internal', `Idempotent response for ${scope} is too large to keep`);
    const entity: StoredEntity = {
      partitionKey: scope,
      rowKey,
      expiresAt: this.clock.now() + this.ttlSeconds * 1000,
      chunks: Math.ceil(text.length / chunkChars),
    };
    for (let i = 0; i < entity.chunks; i++) entity[`v${i}`] = text.slice(i * chunkChars, (i + 1) * chunkChars);
    try {
      await this.store(table, entity, existing?.etag);
      return value;
    } catch (err) {
      if (!hasStatus(err, 409) && !hasStatus(err, 412)) throw translateStorageError(err, `storing idempotent response in ${scope}`);
      // A concurrent request with the same key stored its response first; that one is the answer.
      const winner = await this.read<T>(table, scope, rowKey);
      if (winner === undefined) throw new AppError('Conflict', `Idempotency key for ${scope} changed concurrently; retry`);
      return winner.value;
    }
  }

  /** Replaces the expired row we read, or creates one if there was none or the sweep deleted it meanwhile. */
  private async store(table: TableClient, entity: StoredEntity, etag: string | undefined): Promise<void> {
    if (etag !== undefined) {
      try {
        await table.updateEntity(entity, 'Replace', { etag });
        return;
      } catch (err) {
        if (!hasStatus(err, 404)) throw err;
      }
    }
    await table.createEntity(entity);
  }

  private async read<T>(table: TableClient, scope: string, rowKey: string): Promise<{ value: T; live: boolean; etag: string } | undefined> {
    let entity: Record<string, unknown> & { etag: string };
    try {
      entity = await table.getEntity(scope, rowKey);
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading idempotency key in ${scope}`);
    }
    const chunks = Number(entity.chunks);
    let text = '';
    for (let i = 0; i < chunks; i++) {
      const chunk = entity[`v${i}`];
      text += typeof chunk === 'string' ? chunk : '';
    }
    return { value: JSON.parse(text) as T, live: Number(entity.expiresAt) > this.clock.now(), etag: entity.etag };
  }
}
