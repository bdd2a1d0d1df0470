/** Counter services on Azurite, each on its own freshly named tables. */
import type { TableClient } from '@azure/data-tables';

import { type Clock, systemClock } from '../../shared/clock';
import { readGroup } from '../../shared/config';
import { type CounterSettings, counterSettings } from '../../shared/counters/settings';
import { type CounterServiceDeps, CounterService, type CounterTableNames } from '../../shared/counters/service';
import { type Logger, MemoryLogger } from '../../shared/log';
import { type BackoffPolicy, defaultBackoff } from '../../shared/retry';
import type { StorageClientOptions, StorageClients } from '../../shared/storage/clients';
import { storageFor, uniqueTableName } from './sequences';
import { runStorage } from './storageAccounts';
import type { Telemetry } from '../../shared/telemetry/port';

export function counterTableNames(): CounterTableNames {
  return { settings: uniqueTableName('cset'), data: uniqueTableName('cdata'), dirty: uniqueTableName('cdirty') };
}

export interface CounterHarnessOptions {
  readonly connection?: string;
  readonly tables?: CounterTableNames;
  readonly settings?: Partial<CounterSettings>;
  readonly clock?: Clock;
  readonly logger?: Logger;
  readonly backoff?: BackoffPolicy;
  readonly idempotencyTtlSeconds?: number;
  readonly storage?: StorageClientOptions;
  readonly env?: Record<string, string>;
  /** Group commit (see increment.ts); 0 writes every increment on its own, e.g. to seed N hit rows. */
  readonly writesInFlight?: number;
  readonly telemetry?: Telemetry;
}

export interface CounterHarness {
  readonly service: CounterService;
  readonly storage: StorageClients;
  readonly tables: CounterTableNames;
  readonly logger: Logger;
  table(which: keyof CounterTableNames): Promise<TableClient>;
  /** Every row of one of the three tables, for "nothing was written" checks. */
  rows(which: keyof CounterTableNames): Promise<Record<string, unknown>[]>;
}

export function counterHarness(options: CounterHarnessOptions = {}): CounterHarness {
  const storage = storageFor(options.connection ?? runStorage(), options.storage ?? {}, options.env ?? {});
  const tables = options.tables ?? counterTableNames();
  const logger = options.logger ?? new MemoryLogger();
  const deps: CounterServiceDeps = {
    table: (name) => storage.table(name),
    tableNames: tables,
    settings: { ...readGroup(counterSettings, {}), ...options.settings },
    idempotencyTtlSeconds: options.idempotencyTtlSeconds ?? 3600,
    clock: options.clock ?? systemClock,
    random: Math.random,
    logger,
    backoff: options.backoff ?? { ...defaultBackoff, maxAttempts: 30, maxElapsedMs: 20_000 },
    ...(options.writesInFlight === undefined ? {} : { writesInFlight: options.writesInFlight }),
    ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
  };
  const table = (which: keyof CounterTableNames) => storage.table(tables[which]);
  return {
    service: new CounterService(deps),
    storage,
    tables,
    logger,
    table,
    async rows(which) {
      const rows: Record<string, unknown>[] = [];
      for await (const row of (await table(which)).listEntities<Record<string, unknown>>()) rows.push(row);
      return rows;
    },
  };
}
