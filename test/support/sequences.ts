/** Sequence services and allocators on Azurite, each on its own freshly named tables. */
import { randomUUID } from 'node:crypto';

import type { TableClient } from '@azure/data-tables';

import { type Clock, type Random, systemClock } from '../../shared/clock';
import { loadAppConfig } from '../../shared/app/settings';
import { IdempotencyStore } from '../../shared/idempotency';
import { type Logger, MemoryLogger } from '../../shared/log';
import { type BackoffPolicy } from '../../shared/retry';
import { SequenceAllocator, type AllocatorOptions, type CloseReport, type NumberRange } from '../../shared/sequences/allocator';
import { occBackoff } from '../../shared/retry';
import { type SequenceDefinition, defaultDefinition } from '../../shared/sequences/definition';
import { SequenceService } from '../../shared/sequences/service';
import { SequenceStore } from '../../shared/sequences/store';
import { createStorageClients, type StorageClientOptions, type StorageClients } from '../../shared/storage/clients';
import { runStorage } from './storageAccounts';
import type { Telemetry } from '../../shared/telemetry/port';

/** A table name no other test uses (3-63 alphanumerics, starting with a letter). */
export function uniqueTableName(prefix: string): string {
  return `${prefix}${randomUUID().replace(/-/g, '').slice(0, 16)}`;
}

export function storageFor(
  connection = runStorage(),
  options: StorageClientOptions = {},
  env: Record<string, string> = {},
): StorageClients {
  const config = loadAppConfig({ AzureWebJobsStorage: connection, ...env });
  return createStorageClients(config.storage, { retry: config.storageRetry, ...options });
}

export interface SequenceHarness {
  readonly storage: StorageClients;
  readonly sequencesTable: string;
  readonly idempotencyTable: string;
  readonly store: SequenceStore;
  readonly logger: MemoryLogger;
  table(): Promise<TableClient>;
  idempotency(): Promise<TableClient>;
  service(options?: {
    autoCreate?: boolean;
    maxAutoCreated?: number;
    clock?: Clock;
    random?: Random;
    logger?: Logger;
    backoff?: BackoffPolicy;
    telemetry?: Telemetry;
  }): SequenceService;
  /** An allocator, as one instance would hold it, for a sequence that already exists. */
  allocator(name: string, options?: Partial<Omit<AllocatorOptions, 'store' | 'sequence'>>): Promise<SequenceAllocator>;
  create(name: string, definition?: Partial<SequenceDefinition>): Promise<void>;
  /** Every entity in the sequences table, for "nothing was written" assertions. */
  entities(): Promise<Record<string, unknown>[]>;
  idempotencyEntities(): Promise<Record<string, unknown>[]>;
  highWaterMark(name: string): Promise<number>;
}

export function sequenceHarness(storage: StorageClients = storageFor()): SequenceHarness {
  const sequencesTable = uniqueTableName('seq');
  const idempotencyTable = uniqueTableName('idem');
  const table = (): Promise<TableClient> => storage.table(sequencesTable);
  const idempotency = (): Promise<TableClient> => storage.table(idempotencyTable);
  const store = new SequenceStore(table);
  const logger = new MemoryLogger();
  const backoff = occBackoff(loadAppConfig({ AzureWebJobsStorage: 'UseDevelopmentStorage=true' }).occ);
  const list = async (client: TableClient): Promise<Record<string, unknown>[]> => {
    const out: Record<string, unknown>[] = [];
    for await (const entity of client.listEntities()) out.push(entity);
    return out;
  };
  return {
    storage,
    sequencesTable,
    idempotencyTable,
    store,
    logger,
    table,
    idempotency,
    service: (options = {}) =>
      new SequenceService({
        store,
        idempotency: new IdempotencyStore(idempotency, options.clock ?? systemClock, 3600),
        clock: options.clock ?? systemClock,
        random: options.random ?? Math.random,
        logger: options.logger ?? logger,
        backoff: options.backoff ?? backoff,
        autoCreate: options.autoCreate ?? false,
        maxAutoCreated: options.maxAutoCreated ?? 1000,
        instanceId: randomUUID(),
        ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
      }),
    allocator: async (name, options = {}) => {
      const sequence = await store.read(name);
      if (sequence === undefined) throw new Error(`sequence ${name} does not exist`);
      return new SequenceAllocator({
        store,
        sequence,
        clock: systemClock,
        random: Math.random,
        logger,
        backoff,
        instanceId: randomUUID(),
        ...options,
      });
    },
    create: async (name, definition = {}) => {
      await store.create(name, { ...defaultDefinition, ...definition });
    },
    entities: async () => list(await table()),
    idempotencyEntities: async () => list(await idempotency()),
    highWaterMark: async (name) => {
      const sequence = await store.read(name);
      if (sequence === undefined) throw new Error(`sequence ${name} does not exist`);
      return sequence.next;
    },
  };
}

/** Numbers from `ranges`, expanded. */
function expand(ranges: readonly NumberRange[]): number[] {
  return ranges.flatMap((r) => Array.from({ length: r.hi - r.lo }, (_, i) => r.lo + i));
}

export interface InstanceOutcome {
  readonly label: string;
  /** In the order the instance issued them. */
  readonly issued: readonly number[];
  readonly report: CloseReport;
}

export interface Accounting {
  readonly total: number;
  readonly duplicates: number;
  /** Instances whose numbers were not strictly increasing. */
  readonly notIncreasing: string[];
  /** Numbers below the high-water mark neither issued nor in a tail an instance reported abandoned. */
  readonly unexplained: number[];
  /** Numbers issued or abandoned at or above the high-water mark (must never happen). */
  readonly aboveHighWaterMark: number;
}

/**
 * The checks of Jepsen's unique-ids workload plus block allocation's own promise: every number in
 * [start, hwm) was issued exactly once or sits in an abandoned tail.
 */
export function accountFor(instances: readonly InstanceOutcome[], start: number, hwm: number): Accounting {
  const seen = new Set<number>();
  let duplicates = 0;
  let total = 0;
  const notIncreasing: string[] = [];
  for (const instance of instances) {
    let previous = -Infinity;
    let increasing = true;
    for (const n of instance.issued) {
      if (seen.has(n)) duplicates++;
      seen.add(n);
      if (n <= previous) increasing = false;
      previous = n;
      total++;
    }
    if (!increasing) notIncreasing.push(instance.label);
  }
  const explained = new Set(seen);
  for (const n of expand(instances.flatMap((i) => i.report.abandoned))) explained.add(n);
  const unexplained: number[] = [];
  for (let n = start; n < hwm; n++) if (!explained.has(n)) unexplained.push(n);
  const aboveHighWaterMark = [...explained].filter((n) => n >= hwm || n < start).length;
  return { total, duplicates, notIncreasing, unexplained, aboveHighWaterMark };
}
