/**
 * The streams capability's front door: `createStreams(deps)` builds it from named ports (its routes
 * table, its log container, the task hub its types are counted under, the streams only the app
 * appends to) and hands out the service, the flusher's log activities, and the API the app's own
 * appends use on a Durable client.
 */
import type { TableClient } from '@azure/data-tables';
import type { ContainerClient } from '@azure/storage-blob';

import type { DurableClient } from '../durable/client';
import { retryContextOf } from '../retry';
import { CappedSet } from '../storage/cappedSet';
import { type LogActivities, logActivities } from './activities';
import { AppendCoalescer } from './appendCoalescer';
import { observeDepth } from './depthGauge';
import { FlusherControl } from './flusherControl';
import { LedgerWatch } from './ledgerWatch';
import { RouteResolver } from './resolver';
import { RouteTable } from './routeTable';
import { StreamService, type StreamsApi, streamsApi } from './service';
import { type StreamSettings, streamSettings } from './settings';
import type { Runtime } from '../runtime';

export { streamsRoutes } from './routes';
export type { StreamsApi } from './service';

/** With the runtime every service shares (clock, random, logger, telemetry, back-off, ids). */
export interface StreamsDeps extends Runtime {
  readonly settings: StreamSettings;
  /** The `streamroutes` table: routes (partition `route`) and the types admitted per task hub. */
  readonly routesTable: () => Promise<TableClient>;
  /** The log container and its name. */
  readonly container: () => Promise<ContainerClient>;
  readonly containerName: string;
  /** The Durable task hub: its types are counted apart (TALLYHO_STREAMS_MAX_TYPES). */
  readonly taskHub: string;
  /** Streams the app keeps for itself (an in-app processor's ledger): callers are refused on them. */
  readonly ownTypes: ReadonlySet<string>;
  /**
   * The Durable client the depth gauge reads the writers' ledgers with when a reader collects, outside
   * any invocation (depthGauge.ts): the latest invocation's, which the functions layer keeps. Absent
   * or undefined: the gauge reports nothing.
   */
  readonly recentDurable?: () => DurableClient | undefined;
}

export interface Streams {
  readonly service: StreamService;
  /** The flusher's activities on the log blobs. */
  readonly logs: LogActivities;
  /** Appends for the app itself (an in-app processor's ledger) on the Durable client of the invocation making them. */
  api(client: DurableClient): StreamsApi;
}

export function createStreams(deps: StreamsDeps): Streams {
  const { settings, clock, logger } = deps;
  const routes = new RouteTable(deps.routesTable);
  const service = new StreamService({
    ...deps,
    routes,
    types: new CappedSet({
      // The routes table's `types|<hub>` partition; its route rows live in partition `route`.
      table: deps.routesTable,
      partitionKey: `types|${deps.taskHub}`,
      max: settings.maxTypes,
      noun: 'stream types',
      setting: streamSettings.settings.maxTypes.env,
      retry: retryContextOf(deps, 'the stream type count'),
    }),
    ownTypes: deps.ownTypes,
    resolver: new RouteResolver({ table: routes, clock, ttlMs: settings.routeCacheSeconds * 1000, partitions: settings.partitions }),
    watch: new LedgerWatch(clock, logger),
    appends: new AppendCoalescer(),
    flushers: new FlusherControl(clock, logger),
    container: deps.containerName,
  });
  observeDepth(service.context, deps.recentDurable ?? (() => undefined), (client) => service.depthReads(client));
  return {
    service,
    logs: logActivities(deps.container, clock, deps.telemetry),
    api: (client) => streamsApi(service, client),
  };
}
