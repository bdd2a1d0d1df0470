/** The composition root's builders of the capabilities that need nothing but storage and the runtime (and jobs' ports). */
import { CounterService } from '../counters/service';
import type { DurableClient } from '../durable/client';
import { IdempotencyStore } from '../idempotency';
import { runIdempotencySweep, type SweepReport } from '../idempotencySweep';
import { createJobs, type Jobs, type PushTransport } from '../jobs';
import type { ServiceBusSenders } from '../messaging/serviceBus';
import { containers, serviceBusEntities, tables } from '../resources';
import { retryContextOf } from '../retry';
import { SequenceService } from '../sequences/service';
import { SequenceStore } from '../sequences/store';
import type { Signer } from '../signing/signer';
import { CappedSet } from '../storage/cappedSet';
import type { StorageClients } from '../storage/clients';
import { type LogActivities, logActivities } from '../streams/activities';
import { AppendCoalescer } from '../streams/appendCoalescer';
import { FlusherControl } from '../streams/flusherControl';
import { LedgerWatch } from '../streams/ledgerWatch';
import { RouteResolver } from '../streams/resolver';
import { RouteTable } from '../streams/routeTable';
import { StreamService, type StreamsApi, streamsApi } from '../streams/service';
import { streamSettings } from '../streams/settings';
import { inAppProcessors, processorOwnStreams } from './processors';
import type { Runtime } from './runtime';
import type { AppConfig } from './settings';

export function sequencesOf(config: AppConfig, storage: StorageClients, runtime: Runtime): SequenceService {
  return new SequenceService({
    ...runtime,
    store: new SequenceStore(() => storage.table(tables.sequences)),
    idempotency: new IdempotencyStore(() => storage.table(tables.idempotency), runtime.clock, config.http.idempotencyTtlSeconds),
    autoCreate: config.sequences.autoCreate,
    maxAutoCreated: config.sequences.maxAutoCreated,
    instanceId: runtime.newId(),
  });
}

export function countersOf(config: AppConfig, storage: StorageClients, runtime: Runtime): CounterService {
  return new CounterService({
    ...runtime,
    table: (name) => storage.table(name),
    settings: config.counters,
    idempotencyTtlSeconds: config.http.idempotencyTtlSeconds,
  });
}

export interface StreamsCapability {
  readonly service: StreamService;
  /** The flusher's activities on the log blobs. */
  readonly logs: LogActivities;
  /** Appends for the app itself (jobs' invoice ledger) on a Durable client. */
  api(client: DurableClient): StreamsApi;
}

export function streamsOf(config: AppConfig, storage: StorageClients, runtime: Runtime): StreamsCapability {
  const settings = config.streams;
  const routes = new RouteTable(() => storage.table(tables.streamRoutes));
  const service = new StreamService({
    ...runtime,
    settings,
    routes,
    types: new CappedSet({
      // The routes table's `types|<hub>` partition; its route rows live in partition `route`.
      table: () => storage.table(tables.streamRoutes),
      partitionKey: `types|${config.durable.taskHub}`,
      max: settings.maxTypes,
      noun: 'stream types',
      setting: streamSettings.settings.maxTypes.env,
      retry: retryContextOf(runtime, 'the stream type count'),
    }),
    // Streams an in-app processor keeps for itself (billing's invoice ledger) are written by the app alone.
    ownTypes: processorOwnStreams(config),
    resolver: new RouteResolver({
      table: routes,
      clock: runtime.clock,
      ttlMs: settings.routeCacheSeconds * 1000,
      partitions: settings.partitions,
    }),
    watch: new LedgerWatch(runtime.clock, runtime.logger),
    appends: new AppendCoalescer(),
    flushers: new FlusherControl(runtime.clock, runtime.logger),
    container: containers.streams,
  });
  return {
    service,
    logs: logActivities(() => storage.container(containers.streams), runtime.clock, runtime.telemetry),
    api: (client) => streamsApi(service, client),
  };
}

export function jobsOf(
  config: AppConfig,
  storage: StorageClients,
  serviceBus: ServiceBusSenders,
  runtime: Runtime,
  signer: () => Promise<Signer>,
  /** The streams API for processors that append to a stream, on the Durable client of their hand-on. */
  streams: (durable: DurableClient) => StreamsApi,
  /** How webhook processors' batches are sent. */
  push: PushTransport,
): Jobs {
  return createJobs({
    ...runtime,
    settings: config.jobs,
    storage: {
      jobs: () => storage.table(tables.jobs),
      results: () => storage.table(tables.jobResults),
      processors: () => storage.table(tables.jobProcessors),
      container: () => storage.container(containers.jobs),
      containerName: containers.jobs,
      queue: (name) => storage.queue(name),
    },
    eventSender: () => serviceBus.sender(serviceBusEntities.topics.jobEvents),
    signer,
    processors: inAppProcessors(config, { streams }),
    push,
  });
}

export function sweepOf(storage: StorageClients, runtime: Runtime): () => Promise<SweepReport> {
  return async () => runIdempotencySweep(await storage.table(tables.idempotency), runtime.clock, runtime.logger);
}
