/**
 * Counter settings, one row per counter in the `counters` table. Increments use a per-instance copy
 * (cached for `TALLYHO_COUNTERS_SETTINGS_CACHE_SECONDS`) so the hot path costs one write; reads and
 * reconfiguration read storage.
 *
 * `readPartitions` only ever grows: it is the most partitions any version of the settings used, and
 * reads cover all of them, so an instance still writing with an older partition count is never
 * hidden from a read.
 */
import type { TableClient } from '@azure/data-tables';
import * as z from 'zod';

import type { Clock } from '../clock';
import { AppError } from '../errors';
import { zodIssues } from '../http/route';
import { LostRace } from '../retry';
import { hasStatus, translateStorageError } from '../storage/errors';
import { listPage, type Page, type PageRequest } from '../storage/list';
import { type CounterDefinition, definitionFields } from './definition';

const rowKey = 'counter';

export interface StoredCounter {
  readonly name: string;
  readonly definition: CounterDefinition;
  readonly readPartitions: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly etag: string;
}

const storedRow = z.object({
  etag: z.string(),
  mode: definitionFields.mode,
  partitions: definitionFields.partitions,
  safetyWindowSeconds: definitionFields.safetyWindowSeconds,
  readPartitions: definitionFields.partitions,
  createdAt: z.string(),
  updatedAt: z.string(),
});

function parseRow(name: string, raw: unknown): StoredCounter {
  const parsed = storedRow.safeParse(raw);
  if (!parsed.success) {
    throw new AppError('CorruptState', `Stored settings of counter "${name}" are corrupt; they were left unchanged.`, {
      issues: zodIssues(parsed.error, 'stored'),
      extra: { counter: name },
    });
  }
  const r = parsed.data;
  return {
    name,
    definition: { mode: r.mode, partitions: r.partitions, safetyWindowSeconds: r.safetyWindowSeconds },
    readPartitions: Math.max(r.readPartitions, r.partitions),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    etag: r.etag,
  };
}

function rowOf(name: string, definition: CounterDefinition, readPartitions: number, createdAt: string, updatedAt: string) {
  return { partitionKey: name, rowKey, ...definition, readPartitions, createdAt, updatedAt };
}

interface CacheEntry {
  readonly counter: StoredCounter;
  readonly until: number;
}

export class CounterCatalog {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly table: () => Promise<TableClient>,
    private readonly clock: Clock,
    private readonly cacheMs: number,
  ) {}

  async read(name: string): Promise<StoredCounter | undefined> {
    const table = await this.table();
    let raw: unknown;
    try {
      raw = await table.getEntity(name, rowKey);
    } catch (err) {
      if (hasStatus(err, 404)) {
        this.cache.delete(name);
        return undefined;
      }
      throw translateStorageError(err, `reading counter ${name}`);
    }
    return this.remember(parseRow(name, raw));
  }

  /** The settings as this instance last saw them, read again once the copy is older than the TTL. */
  async cached(name: string): Promise<StoredCounter | undefined> {
    const hit = this.cache.get(name);
    if (hit !== undefined && hit.until > this.clock.now()) return hit.counter;
    return this.read(name);
  }

  /** A page of counters in name order (for operators); unreadable ones by name. */
  async list(page: PageRequest): Promise<Page<StoredCounter>> {
    const query = { filter: `RowKey eq '${rowKey}'`, list: 'counters', doing: 'listing counters' };
    return listPage(await this.table(), query, page, (row) => parseRow(row.partitionKey ?? '', row));
  }

  /** Insert-if-absent; `created: false` returns what was already stored. */
  async create(name: string, definition: CounterDefinition): Promise<{ created: boolean; counter: StoredCounter }> {
    const table = await this.table();
    const now = new Date(this.clock.now()).toISOString();
    try {
      const response = await table.createEntity(rowOf(name, definition, definition.partitions, now, now));
      if (response.etag === undefined) throw new AppError('Internal', `Storage returned no ETag creating counter ${name}`);
      const counter = { name, definition, readPartitions: definition.partitions, createdAt: now, updatedAt: now, etag: response.etag };
      return { created: true, counter: this.remember(counter) };
    } catch (err) {
      if (!hasStatus(err, 409)) throw translateStorageError(err, `creating counter ${name}`);
    }
    const existing = await this.read(name);
    if (existing === undefined) throw new LostRace(`counter ${name} was deleted while being created`);
    return { created: false, counter: existing };
  }

  /** Replaces the settings if nobody changed them since `current` was read (else `LostRace`). */
  async replace(current: StoredCounter, definition: CounterDefinition): Promise<StoredCounter> {
    const table = await this.table();
    const now = new Date(this.clock.now()).toISOString();
    const readPartitions = Math.max(current.readPartitions, definition.partitions);
    try {
      const response = await table.updateEntity(rowOf(current.name, definition, readPartitions, current.createdAt, now), 'Replace', {
        etag: current.etag,
      });
      if (response.etag === undefined) throw new AppError('Internal', `Storage returned no ETag updating counter ${current.name}`);
      return this.remember({ ...current, definition, readPartitions, updatedAt: now, etag: response.etag });
    } catch (err) {
      if (hasStatus(err, 412) || hasStatus(err, 404)) throw new LostRace(`counter ${current.name} changed since it was read`);
      throw translateStorageError(err, `updating counter ${current.name}`);
    }
  }

  private remember(counter: StoredCounter): StoredCounter {
    if (this.cacheMs > 0) this.cache.set(counter.name, { counter, until: this.clock.now() + this.cacheMs });
    return counter;
  }
}
