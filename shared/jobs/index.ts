/**
 * The jobs capability's front door: `createJobs(deps)` builds every part of it from named ports
 * (its tables, blob container and queues, the Service Bus sender of its topic, the signing key, the
 * in-app processors, the push transport) and hands out its sub-services:
 *
 * - `submissions`: submit, check, cancel, retry the failed items (submit/);
 * - `reads`: a job, its view, results, files, the backlog (http/reads.ts);
 * - `processors`: declared processors (processors/);
 * - `leases`: external processors' workers take, extend and complete leases (delivery/);
 * - `work`: the work queues' and poison queues' triggers (delivery/);
 * - `outputs`: the hand-on trigger, on its own Durable client (ledger/outputs.ts);
 * - `upkeep`: the reconciler and the retention purge, and the pusher of webhook processors' batches.
 *
 * Inside, the rooms import downwards only: http/ → submit/ → delivery/ → ledger/ (the only writer of
 * job state) → processors/ → envelopes/ (ids, the input file, envelopes and their wire form, queues).
 */
import type { TableClient } from '@azure/data-tables';
import type { ContainerClient } from '@azure/storage-blob';
import type { QueueClient } from '@azure/storage-queue';

import type { Clock } from '../clock';
import type { Logger } from '../log';
import { type BackoffPolicy, retryContextOf } from '../retry';
import type { Signer } from '../signing/signer';
import { CappedSet } from '../storage/cappedSet';
import type { Telemetry } from '../telemetry/port';
import { InAppEngine } from './delivery/inApp';
import { delayBefore, inAppRules } from './delivery/itemAttempts';
import { LeaseGranter } from './delivery/leaseGrant';
import { LeaseHub } from './delivery/leaseHub';
import { Leases } from './delivery/leases';
import { PoisonHandler } from './delivery/poison';
import { StorageProcessorQueues } from './delivery/processorQueues';
import { Pusher, type PushReport } from './delivery/pusher';
import { WorkQueues } from './delivery/workQueues';
import { JobFiles } from './envelopes/files';
import { StorageEnvelopeQueues } from './envelopes/queues';
import { Completion } from './ledger/completion';
import { type JobEventSender, JobEventPublisher } from './ledger/events';
import { JobRows, tooManyOpen, tooManyOpenOfOwner } from './ledger/jobRows';
import { JobStore } from './ledger/jobStore';
import { Outputs } from './ledger/outputs';
import { type PurgeReport, purgeFinished } from './ledger/purge';
import { CarrierRows } from './ledger/carrierRows';
import { LeaseLog } from './ledger/leaseLog';
import { ResultStore } from './ledger/resultStore';
import { jobInstruments, type JobInstruments } from './metrics';
import { observeBacklog } from './backlogGauges';
import { Declarations } from './processors/declarations';
import { ItemSchemas } from './processors/itemSchema';
import type { ProcessorRegistry } from './processors/processor';
import { ProcessorStore } from './processors/processorStore';
import type { PushTransport } from './processors/pushTransport';
import { JobReads } from './http/reads';
import { type JobSettings, jobSettings } from './settings';
import { Enqueuer } from './submit/enqueue';
import { type ReconcileDeps, type ReconcileReport, Reconciler } from './submit/reconcile';
import { Cancels } from './submit/cancel';
import { cancelQueueName, deliveryQueueName, workLaneNames, workQueueNames } from './queueNames';
import { Expiry } from './submit/expiry';
import { Submissions } from './submit/submissions';

export { jobsRoutes } from './http/routes';
export { cancelQueueName, deliveryQueueName, poisonQueueName, workLaneNames, workQueueNames } from './queueNames';
export { isFinished } from './ledger/jobRecord';
export {
  type FinalizeContext,
  type ItemOutcome,
  registry,
  type JobProcessor,
  type ProcessorInfo,
  type ProcessorRegistry,
} from './processors/processor';
export type { JsonObject } from './envelopes/envelope';
export { itemId } from './envelopes/ids';
export type { PushTransport } from './processors/pushTransport';
export type { JobEventSender } from './ledger/events';

/** Where the capability keeps its rows, blobs and messages. */
interface JobsStorage {
  /** The `jobs` table: job rows, the open and finished indexes, the places among TALLYHO_JOBS_MAX_OPEN. */
  readonly jobs: () => Promise<TableClient>;
  /** The `jobresults` table: a job's results, tallies and envelope errors. */
  readonly results: () => Promise<TableClient>;
  /** The `jobprocessors` table: declared processors and their count. */
  readonly processors: () => Promise<TableClient>;
  /** The `jobs` container: inputs, round item lists and the processors' files. */
  readonly container: () => Promise<ContainerClient>;
  /** Its name, as claim checks carry it. */
  readonly containerName: string;
  /** A queue by name: the work queues, their poison queues, declared processors' queues, the hand-on and cancel queues. */
  readonly queue: (name: string) => Promise<QueueClient>;
}

export interface JobsDeps {
  readonly settings: JobSettings;
  readonly storage: JobsStorage;
  /** The sender of the `job-events` topic; undefined without Service Bus (JobCompleted is then not published). */
  readonly eventSender: () => JobEventSender | undefined;
  /** MACs of envelopes, lease ids and keyed job ids (loaded once per process). */
  readonly signer: () => Promise<Signer>;
  /** The in-app processors, registered where the app is composed. */
  readonly processors: ProcessorRegistry;
  /** How webhook processors' batches are sent (the webhook guard and caller of shared/effects). */
  readonly push: PushTransport;
  readonly clock: Clock;
  readonly random: () => number;
  readonly logger: Logger;
  readonly telemetry: Telemetry;
  readonly backoff: BackoffPolicy;
  /** Fresh ids: enqueue and finalization leases. */
  readonly newId: () => string;
}

/** The reconciler, the retention purge and the pusher: what the capability's timers run. */
interface JobsUpkeep {
  reconcile(): Promise<ReconcileReport>;
  purge(): Promise<PurgeReport>;
  /** Pushes webhook processors' batches for up to `budgetMs` (the push timer). */
  push(budgetMs: number): Promise<PushReport>;
}

export interface Jobs {
  readonly submissions: Submissions;
  readonly reads: JobReads;
  readonly processors: Declarations;
  readonly leases: Leases;
  /** DELETE /api/jobs/{id} (`request`) and the `jobsCancelItems` trigger's background step (`onRequest`). */
  readonly cancels: Pick<Cancels, 'request' | 'onRequest'>;
  readonly work: WorkQueues;
  /** What a completed job still owes: the hand-on trigger's use-case, and going on with a job's outputs. */
  readonly outputs: Pick<Outputs, 'onDeliveryRequest' | 'finish'>;
  readonly upkeep: JobsUpkeep;
  /** Unfinished jobs `owner` (a Caller id) holds of TALLYHO_JOBS_MAX_OPEN: one point read. */
  openJobsOf(owner: string): Promise<number>;
  /** The instance is stopping: open lease long polls answer now, empty, as when their wait runs out. */
  stopping(): void;
}

/** The stores and the capped sets, on the capability's own tables. */
function stores(deps: JobsDeps) {
  const { settings, storage, clock } = deps;
  const retry = (subject: string) => retryContextOf(deps, subject);
  return {
    jobs: new JobStore(storage.jobs),
    results: new ResultStore(storage.results, () => clock.now()),
    leaseLog: new LeaseLog(storage.results, () => clock.now()),
    carriers: new CarrierRows(storage.results),
    files: new JobFiles(storage.container, storage.containerName),
    queues: new StorageEnvelopeQueues(storage.queue, workQueueNames(settings), workLaneNames(settings), deps.signer),
    processorQueues: new StorageProcessorQueues(storage.queue),
    declared: new ProcessorStore(storage.processors, () => clock.now(), settings.processorCacheSeconds * 1000),
    declaredNames: new CappedSet({
      table: storage.processors,
      partitionKey: '|declared',
      max: settings.maxProcessors,
      noun: 'declared processors',
      setting: jobSettings.settings.maxProcessors.env,
      retry: retry('the declared processor count'),
    }),
    slots: new CappedSet({
      // The jobs table's `|slots` partition: no job id starts with `|`.
      table: storage.jobs,
      partitionKey: '|slots',
      max: settings.maxOpen,
      noun: 'unfinished jobs',
      setting: jobSettings.settings.maxOpen.env,
      retry: retry('the unfinished job count'),
      whenFull: () => tooManyOpen(settings.maxOpen),
      // A job's place goes back on whichever instance finishes it, and a job takes one again for a
      // new round, or after the reconciler gave a slow submission's back (jobRows.ts).
      remembers: false,
      share: Math.min(settings.maxOpenPerOwner, settings.maxOpen),
      whenOverShare: () => tooManyOpenOfOwner(Math.min(settings.maxOpenPerOwner, settings.maxOpen)),
    }),
  };
}

export function createJobs(deps: JobsDeps): Jobs {
  const { settings, storage, clock, logger, signer } = deps;
  const instruments = jobInstruments(deps.telemetry);
  const s = stores(deps);
  const inApp = deps.processors;
  const newLease = deps.newId;
  const rows = new JobRows({ jobs: s.jobs, slots: s.slots, clock });
  const events = new JobEventPublisher(deps.eventSender);
  const outputs = new Outputs({
    jobs: s.jobs,
    files: s.files,
    processors: inApp,
    events,
    deliveryQueue: () => storage.queue(deliveryQueueName(settings)),
    clock,
    logger,
    instruments,
  });
  const completion = new Completion({
    ...deps,
    ...s,
    processors: inApp,
    outputs,
    staleSeconds: settings.staleSeconds,
    newLease,
    instruments,
  });
  const hub = new LeaseHub(s.processorQueues, clock, logger, { pollMaxMs: settings.leasePollMaxMs, maxWaiters: settings.maxLeaseWaiters });
  const wake = (queue: string): void => hub.wake(queue);
  const granter = new LeaseGranter({ ...s, rows, completion, wake, settings, clock, logger });
  const leases = new Leases({
    ...s,
    inApp,
    granter,
    hub,
    rows,
    completion,
    maxItems: settings.maxItems,
    signer,
    clock,
    logger,
    instruments,
  });
  const enqueuer = new Enqueuer({ ...s, rows, parallelism: settings.enqueueParallelism, logger });
  const itemSchemas = new ItemSchemas();
  const reads = new JobReads({ ...s, rows, inApp, queuePrefix: settings.queuePrefix, clock });
  const cancels = new Cancels({ ...s, rows, enqueuer, completion, cancelQueue: () => storage.queue(cancelQueueName(settings)), logger });
  const jobs: Jobs = {
    submissions: new Submissions({ ...deps, ...s, inApp, itemSchemas, rows, enqueuer, completion, outputs, wake, newLease, instruments }),
    reads,
    processors: new Declarations({
      ...s,
      names: s.declaredNames,
      inApp,
      itemSchemas,
      push: deps.push,
      queuePrefix: settings.queuePrefix,
      clock,
      logger,
    }),
    leases,
    cancels,
    work: workQueuesOf(deps, s, completion, instruments),
    outputs,
    upkeep: upkeepOf(
      deps,
      s,
      reconcilerOf(deps, s, { rows, enqueuer, completion, outputs, cancels }),
      new Pusher({ ...s, leases, push: deps.push, clock, logger, instruments }),
    ),
    stopping: () => hub.close(),
    openJobsOf: (owner) => s.slots.heldBy(owner),
  };
  observeBacklog(instruments, reads, clock);
  return jobs;
}

/** The work queues' and poison queues' triggers, on the in-app engine. */
function workQueuesOf(deps: JobsDeps, s: ReturnType<typeof stores>, completion: Completion, instruments: JobInstruments): WorkQueues {
  const { settings, signer, logger } = deps;
  const inApp = new InAppEngine({ ...s, processors: deps.processors, completion, settings, signer, logger, instruments });
  const poison = new PoisonHandler({ results: s.results, completion, inApp, signer, logger, instruments });
  // A failed work queue's message moves to its lane after the back-off before a second attempt (./delivery/workQueues.ts).
  const failedDelaySeconds = delayBefore(inAppRules(settings), 2);
  return new WorkQueues({ inApp, poison, processorQueues: s.processorQueues, failedDelaySeconds, logger, instruments });
}

/** The reconciler, with the idle-job rule (./submit/expiry.ts). */
function reconcilerOf(
  deps: JobsDeps,
  s: ReturnType<typeof stores>,
  parts: Pick<ReconcileDeps, 'rows' | 'enqueuer' | 'completion' | 'outputs' | 'cancels'>,
): Reconciler {
  const { settings, clock, logger } = deps;
  const expiry = new Expiry({
    ...s,
    ...parts,
    declared: (name) => s.declared.get(name),
    defaultIdleLimitSeconds: settings.idleLimitSeconds,
    clock,
    logger,
  });
  return new Reconciler({
    ...parts,
    expiry,
    staleSeconds: settings.staleSeconds,
    pageSize: settings.reconcilePage,
    newLease: deps.newId,
    clock,
    logger,
  });
}

function upkeepOf(deps: JobsDeps, s: ReturnType<typeof stores>, reconciler: Reconciler, pusher: Pusher): JobsUpkeep {
  const { settings, clock, logger } = deps;
  return {
    reconcile: () => reconciler.run(),
    purge: () => purgeFinished({ ...s, retentionDays: settings.retentionDays, clock, logger }),
    push: (budgetMs) => pusher.run(budgetMs),
  };
}
