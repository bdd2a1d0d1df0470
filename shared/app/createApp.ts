/**
 * The composition root: every service of the app, built once from the config, the storage clients,
 * a clock and a logger, with the capabilities' ports wired here explicitly. Nothing else in shared/
 * builds a service or keeps one in a module variable; functions/ keeps the one lazy app (functions/_app.ts).
 *
 * Durable Functions: a use-case that needs a Durable client takes the client of the invocation it
 * serves (`gates.service(client)`, `schedules.service(client)`, the streams service's calls). Work
 * outside any invocation — the gate watchers' reads, a job completion appending to a stream — takes
 * it from `durable`, the app's DurableClientSource (shared/durable/source.ts explains why the first
 * client offered serves, and the 503 before there is one).
 */
import type { Clock, Random } from '../clock';
import type { CounterService } from '../counters/service';
import type { DurableClient } from '../durable/client';
import { type RequestMetrics, requestMetricsOf } from '../http/metrics';
import type { EffectPorts } from '../effects/runner';
import type { SweepReport } from '../idempotencySweep';
import type { Jobs } from '../jobs';
import type { Logger } from '../log';
import type { ServiceBusSenders } from '../messaging/serviceBus';
import { containers, serviceBusEntities, tables } from '../resources';
import { createGates, type Gates } from '../gates';
import { occBackoff } from '../retry';
import type { SequenceService } from '../sequences/service';
import { containerKeyBlob, signerOf } from '../signing/keyStore';
import type { StorageClients } from '../storage/clients';
import { effectRulesOf, gateActionCheck, gateReleasePort, jobPort, pushTransport } from './ports';
import type { Runtime } from './runtime';
import { schedulesOf, type SchedulesCapability } from './schedules';
import { countersOf, jobsOf, sequencesOf, type StreamsCapability, streamsOf, sweepOf } from './services';
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
}

export interface App {
  readonly config: AppConfig;
  readonly storage: StorageClients;
  readonly sequences: SequenceService;
  readonly counters: CounterService;
  readonly gates: Gates;
  readonly schedules: SchedulesCapability;
  readonly jobs: Jobs;
  readonly streams: StreamsCapability;
  /** Where the HTTP adapter records each answered request (http.server.request.duration). */
  readonly requests: RequestMetrics;
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
  const signer = signerOf(
    config.signing.key,
    containerKeyBlob(() => storage.container(containers.secrets)),
  );

  const streams = streamsOf(config, storage, runtime);
  const webhook = config.schedules;
  const webhookRules = effectRulesOf(config, { serviceBus: config.serviceBus !== undefined, jobs: undefined }).webhook;
  const jobs = jobsOf(
    config,
    storage,
    serviceBus,
    runtime,
    signer,
    (client) => streams.api(client),
    pushTransport(webhookRules, webhook.webhookMaxRedirects),
  );

  const effectRules = effectRulesOf(config, { serviceBus: config.serviceBus !== undefined, jobs: jobs.submissions });

  /** What effects run with; a gate release needs the Durable client of the invocation running it. */
  const effectPorts = (client: DurableClient | undefined): EffectPorts => ({
    queue: (name) => storage.queue(name),
    serviceBusSender: (entity) => serviceBus.sender(entity),
    webhook: {
      ...effectRules.webhook,
      timeoutMs: webhook.webhookTimeoutMs,
      maxResponseBytes: webhook.webhookMaxResponseBytes,
      maxRedirects: webhook.webhookMaxRedirects,
    },
    gates: client === undefined ? undefined : gateReleasePort(gates.commands(client)),
    jobs: jobPort(jobs),
  });
  const gates = createGates({
    ...runtime,
    settings: config.gates,
    table: () => storage.table(tables.gates),
    eventSender: () => serviceBus.sender(serviceBusEntities.topics.gateEvents),
    // A gate run's action gets no Durable client: none of the effects it may make (none, enqueue, job) needs one.
    effects: effectPorts(undefined),
    checkAction: gateActionCheck(effectRules),
  });
  const schedules = schedulesOf(config, storage, serviceBus, runtime, effectRules, effectPorts);
  const sequences = sequencesOf(config, storage, runtime);

  // Long polls and event streams answer now; shutdown() does the same first, then the rest.
  const stopping = (): void => {
    gates.hub.close();
    jobs.stopping();
  };
  return {
    config,
    storage,
    sequences,
    counters: countersOf(config, storage, runtime),
    gates,
    schedules,
    jobs,
    streams,
    requests: requestMetricsOf(runtime.telemetry),
    sweepIdempotency: sweepOf(storage, runtime),
    stopping,
    async shutdown() {
      stopping();
      await Promise.allSettled([sequences.shutdown(), serviceBus.close()]);
      // Last, so what the shutdown itself recorded is exported too.
      await telemetry.shutdown();
    },
  };
}
