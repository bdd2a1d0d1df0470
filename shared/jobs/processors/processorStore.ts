/**
 * The `jobprocessors` table: one row per declared processor (PartitionKey `p`, RowKey = name), the
 * declaration as JSON. Reads are cached per process for TALLYHO_JOBS_PROCESSOR_CACHE_SECONDS: every
 * submission, lease and completion names its processor, and a declaration changes rarely. Only found
 * processors are cached, so one declared on another instance is seen at once.
 */
import type { TableClient } from '@azure/data-tables';

import { AppError } from '../../errors';
import { LostRace } from '../../retry';
import { hasStatus, translateStorageError } from '../../storage/errors';
import type { DeclaredProcessor } from './processorDefinition';

const partition = 'p';

export interface StoredProcessor {
  readonly processor: DeclaredProcessor;
  readonly etag: string;
}

function parse(name: string, raw: Record<string, unknown>): DeclaredProcessor {
  if (typeof raw.def !== 'string') throw new AppError('CorruptState', `Processor ${name} has no declaration`);
  const def = JSON.parse(raw.def) as DeclaredProcessor;
  if (def.name !== name || (def.type !== 'external' && def.type !== 'webhook')) {
    throw new AppError('CorruptState', `The declaration of processor ${name} is not one`);
  }
  return def;
}

export class ProcessorStore {
  private readonly cache = new Map<string, { stored: StoredProcessor; until: number }>();

  constructor(
    private readonly table: () => Promise<TableClient>,
    private readonly now: () => number,
    private readonly cacheMs: number,
  ) {}

  /** The declaration, from this process's cache when it is fresh. */
  async get(name: string): Promise<DeclaredProcessor | undefined> {
    const cached = this.cache.get(name);
    if (cached !== undefined && cached.until > this.now()) return cached.stored.processor;
    return (await this.read(name))?.processor;
  }

  async read(name: string): Promise<StoredProcessor | undefined> {
    const table = await this.table();
    try {
      const raw = await table.getEntity<Record<string, unknown>>(partition, name);
      return this.remember({ processor: parse(name, raw), etag: raw.etag });
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      if (err instanceof AppError) throw err;
      throw translateStorageError(err, `reading processor ${name}`);
    }
  }

  /** Inserts, or replaces the row at `etag`; LostRace when it changed (or appeared) meanwhile. */
  async write(processor: DeclaredProcessor, etag: string | undefined): Promise<StoredProcessor> {
    const table = await this.table();
    const entity = { partitionKey: partition, rowKey: processor.name, def: JSON.stringify(processor) };
    try {
      const response = etag === undefined ? await table.createEntity(entity) : await table.updateEntity(entity, 'Replace', { etag });
      return this.remember({ processor, etag: response.etag ?? '' });
    } catch (err) {
      if (hasStatus(err, 409) || hasStatus(err, 412) || hasStatus(err, 404)) throw new LostRace(`processor ${processor.name} changed`);
      throw translateStorageError(err, `writing processor ${processor.name}`);
    }
  }

  async list(): Promise<DeclaredProcessor[]> {
    const table = await this.table();
    const out: DeclaredProcessor[] = [];
    try {
      for await (const raw of table.listEntities<Record<string, unknown>>({ queryOptions: { filter: `PartitionKey eq '${partition}'` } })) {
        const name = String(raw.rowKey);
        out.push(this.remember({ processor: parse(name, raw), etag: raw.etag }).processor);
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw translateStorageError(err, 'listing processors');
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  private remember(stored: StoredProcessor): StoredProcessor {
    if (this.cache.size > 1000) this.cache.clear();
    this.cache.set(stored.processor.name, { stored, until: this.now() + this.cacheMs });
    return stored;
  }
}
