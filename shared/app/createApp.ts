/**
 * The composition root: every capability of the app, built once through its front door
 * (`createX(deps)` in shared/<capability>/index.ts) from the config, the storage clients, the Service
 * Bus senders, a clock and a logger. The root hands each capability its ports — tables and queues by
 * name, senders, the settings — and wires capabilities to each other through ports (./ports.ts: the
 * effects runner takes the gates' release and the jobs' submission), in the order they depend on one
 * another; it builds nothing inside a capability. Nothing else in shared/ builds a service or keeps
 * one in a module variable; functions/ keeps the one lazy app (functions/_app.ts).
 *
 * Durable Functions: a use-case that needs a Durable client takes the client of the invocation it
 * serves (`gates.commands(client)`, `schedules.service(client)`, a job processor's hand-on in its own
 * trigger); no capability keeps one. Only a read outside any invocation (the streams' depth gauge,
 * at collection) asks for the latest invocation's client, which the functions layer keeps.
 */
import type { Clock, Random } from '../clock';
import { type CounterService, createCounters } from '../counters';
import type { DurableClient } from '../durable';
import type { EffectPorts } from '../effects';
import { createGates, type Gates } from '../gates';
import { HeldRequests, type RequestMetrics, requestMetricsOf } from '../http';
import { runIdempotencySweep, type SweepReport } from '../idempotencySweep';
import { createJobs, type Jobs } from '../jobs';
import { type Callers, createCallers } from '../callers';
import type { Logger } from '../log';
import type { ServiceBusSenders } from '../messaging';
import { containers, serviceBusEntities, tables } from '../resources';
import { occBackoff } from '../retry';
import { createSchedules, type Schedules } from '../schedules';
import { createSequences, type SequenceService } from '../sequences';
import { containerKeyBlob, signerOf } from '../signing';
import type { StorageClients } from '../storage';
import { createStreams, type Streams } from '../streams';
import { effectRulesOf, gateActionCheck, gateReleasePort, jobPort, pushTransport, webhookRulesOf } from './ports';
import { inAppProcessors, processorOwnStreams } from './processors';
import type { Runtime } from '../runtime';
import type { AppConfig } from './settings';
import { type AppTelemetry, telemetryOff } from './telemetry';

export interface AppDeps {
  readonly config: AppConfig;
  readonly storage: StorageClients;
  readonly serviceBus: ServiceBusSenders;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  /** Fresh ids (run ids, leases, the instance id of the sequence allocators). */
  readonly newId: () => string;
  /** Metrics and traces (shared/app/telemetry.ts); none when absent. */
  readonly telemetry?: AppTelemetry;
  /**
   * The latest invocation's Durable client, kept by the functions layer (functions/_durable.ts) for
   * reads outside any invocation: the streams' depth gauge, read when a reader collects.
   */
  readonly recentDurable?: () => DurableClient | undefined;
}

export interface App {
  readonly config: AppConfig;
  readonly storage: StorageClients;
  readonly sequences: SequenceService;
  readonly counters: CounterService;
  readonly gates: Gates;
  readonly schedules: Schedules;
  readonly jobs: Jobs;
  /** Named callers' credentials: issued, listed and revoked by admins, checked for revocation on use. */
  readonly callers: Callers;
  readonly streams: Streams;
  /** Where the HTTP adapter records each answered request (http.server.request.duration). */
  readonly requests: RequestMetrics;
  /** The long polls and event streams this instance holds open (TALLYHO_HTTP_MAX_HELD, fair shares by caller). */
  readonly held: HeldRequests;
  /** Deletes expired Idempotency-Key rows (the sweep timer). */
  sweepIdempotency(): Promise<SweepReport>;
  /**
   * The host was told to stop: open gate and job-lease long polls answer now (their timeout answer)
   * and event streams end, so the host's drain of in-flight requests, which comes before shutdown(), is not
   * held for their whole timeout. Storage stays usable.
   */
  stopping(): void;
  /** Graceful stop: unused sequence numbers go back, open long polls answer, Service Bus closes, telemetry is flushed. */
  shutdown(): Promise<void>;
}

/** What a capability is built with: its tables by name, and the runtime every one shares. */
interface Wiring {
  readonly config: AppConfig;
  readonly storage: StorageClients;
  readonly serviceBus: ServiceBusSenders;
  readonly runtime: Runtime;
  readonly table: (name: string) => () => ReturnType<StorageClients['table']>;
  readonly recentDurable: (() => DurableClient | undefined) | undefined;
}

/** The capabilities that keep data and need no other capability: streams, sequences, counters, callers. */
function dataCapabilities({ config, storage, runtime, table, recentDurable }: Wiring) {
  const streams = createStreams({
    ...runtime,
    settings: config.streams,
    routesTable: table(tables.streamRoutes),
    container: () => storage.container(containers.streams),
    containerName: containers.streams,
    taskHub: config.durable.taskHub,
    ownTypes: processorOwnStreams(config),
    recentDurable,
  });
  const sequences = createSequences({
    ...runtime,
    settings: config.sequences,
    table: table(tables.sequences),
    idempotency: { table: table(tables.idempotency), ttlSeconds: config.http.idempotencyTtlSeconds },
  });
  const counters = createCounters({
    ...runtime,
    settings: config.counters,
    table: (name) => storage.table(name),
    idempotencyTtlSeconds: config.http.idempotencyTtlSeconds,
  });
  const callers = createCallers({
    ...runtime,
    settings: config.callers,
    table: table(tables.callers),
    credentialsKey: config.identity.credentialsKey,
  });
  return { streams, sequences, counters, callers };
}

/** Jobs (its in-app processors append through streams), then what runs effects: gates, then schedules (a target may release a gate). */
function workCapabilities({ config, storage, serviceBus, runtime, table }: Wiring, streams: Streams) {
  const webhook = webhookRulesOf(config);
  const jobs = createJobs({
    ...runtime,
    settings: config.jobs,
    storage: {
      jobs: table(tables.jobs),
      results: table(tables.jobResults),
      processors: table(tables.jobProcessors),
      container: () => storage.container(containers.jobs),
      containerName: containers.jobs,
      queue: (name) => storage.queue(name),
    },
    eventSender: () => serviceBus.sender(serviceBusEntities.topics.jobEvents),
    signer: signerOf(
      config.signing.key,
      containerKeyBlob(() => storage.container(containers.secrets)),
    ),
    processors: inAppProcessors(config, { streams: (client) => streams.api(client) }),
    push: pushTransport(webhook, config.schedules.webhookMaxRedirects),
  });
  const effectRules = effectRulesOf(config, { serviceBus: config.serviceBus !== undefined, jobs: jobs.submissions, webhook });
  /** What effects run with; a gate release (a schedule's target) takes the gates' commands on the activity's client. */
  const effectPorts = (gateRelease: EffectPorts['gates']): EffectPorts => ({
    queue: (name) => storage.queue(name),
    serviceBusSender: (entity) => serviceBus.sender(entity),
    webhook: {
      ...webhook,
      timeoutMs: config.schedules.webhookTimeoutMs,
      maxResponseBytes: config.schedules.webhookMaxResponseBytes,
      maxRedirects: config.schedules.webhookMaxRedirects,
    },
    gates: gateRelease,
    jobs: jobPort(jobs),
  });
  const gates = createGates({
    ...runtime,
    settings: config.gates,
    table: table(tables.gates),
    eventSender: () => serviceBus.sender(serviceBusEntities.topics.gateEvents),
    // A gate run's action gets no gate release: none of the effects it may make (none, enqueue, job) is one.
    effects: effectPorts(undefined),
    checkAction: gateActionCheck(effectRules),
  });
  const schedules = createSchedules({
    ...runtime,
    settings: config.schedules,
    table: table(tables.schedules),
    sender: config.serviceBus === undefined ? undefined : (entity) => serviceBus.sender(entity),
    effectRules,
    effects: (client: DurableClient | undefined) => effectPorts(client === undefined ? undefined : gateReleasePort(gates.commands(client))),
  });
  return { jobs, gates, schedules };
}

export function createApp(deps: AppDeps): App {
  const { config, storage, serviceBus } = deps;
  const telemetry = deps.telemetry ?? telemetryOff;
  const runtime: Runtime = {
    clock: deps.clock,
    random: deps.random,
    logger: deps.logger,
    telemetry: telemetry.telemetry,
    backoff: occBackoff(config.occ),
    newId: deps.newId,
  };
  const wiring: Wiring = {
    config,
    storage,
    serviceBus,
    runtime,
    table: (name) => () => storage.table(name),
    recentDurable: deps.recentDurable,
  };
  const { streams, sequences, counters, callers } = dataCapabilities(wiring);
  const { jobs, gates, schedules } = workCapabilities(wiring, streams);
  // Long polls and event streams answer now; shutdown() does the same first, then the rest.
  const stopping = (): void => {
    gates.hub.close();
    jobs.stopping();
  };
  return {
    config,
    storage,
    sequences,
    counters,
    gates,
    schedules,
    jobs,
    streams,
    callers,
    requests: requestMetricsOf(runtime.telemetry),
    held: new HeldRequests(() => config.http.maxHeld),
    sweepIdempotency: async () => runIdempotencySweep(await storage.table(tables.idempotency), runtime.clock, runtime.logger),
    stopping,
    async shutdown() {
      stopping();
      await Promise.allSettled([sequences.shutdown(), serviceBus.close()]);
      // Last, so what the shutdown itself recorded is exported too.
      await telemetry.shutdown();
    },
  };
}
