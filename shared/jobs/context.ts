/** What the job use-cases share within a process: settings, stores, queues, processors, time. */
import type { Clock } from '../clock';
import type { JobSettings } from './settings';
import type { Logger } from '../log';
import type { Signer } from '../signing/signer';
import type { BackoffPolicy } from '../retry';
import type { JobEventPublisher } from './ledger/events';
import type { JobFiles } from './envelopes/files';
import type { JobStore } from './ledger/jobStore';
import type { ProcessorRegistry } from './processors/processor';
import type { EnvelopeQueues } from './envelopes/queues';
import type { ResultStore } from './ledger/resultStore';
import type { ItemSchemas } from './processors/itemSchema';
import type { ProcessorStore } from './processors/processorStore';
import type { ProcessorQueues } from './delivery/processorQueues';
import type { LeaseHub } from './delivery/leaseHub';
import type { PushTransport } from './processors/pushTransport';
import { jobTelemetry } from './metrics';
import { noTelemetry, type Telemetry } from '../telemetry/port';

/** The places among TALLYHO_JOBS_MAX_OPEN: a capped set of job ids (shared/storage/cappedSet.ts). */
interface OpenSlots {
  admit(jobId: string): Promise<void>;
  release(jobId: string): Promise<boolean>;
}

export interface JobsContext {
  readonly settings: JobSettings;
  readonly jobs: JobStore;
  readonly results: ResultStore;
  readonly files: JobFiles;
  readonly queues: EnvelopeQueues;
  /** The in-app processors, registered where the app is composed. */
  readonly processors: ProcessorRegistry;
  /** External and webhook processors, declared at run time. */
  readonly declared: ProcessorStore;
  /** The names declared so far (TALLYHO_JOBS_MAX_PROCESSORS), a capped set. */
  readonly declaredNames: Pick<OpenSlots, 'admit'>;
  /** How a webhook processor's batches are sent (the webhook guard and caller of shared/effects). */
  readonly push: PushTransport;
  readonly itemSchemas: ItemSchemas;
  readonly slots: OpenSlots;
  /** Receiving, extending and deleting on the declared processors' queues. */
  readonly processorQueues: ProcessorQueues;
  /** This instance's long polls for leases, one poll loop per processor queue. */
  readonly leaseHub: LeaseHub;
  /** Tells this instance's waiting lease requests that `queue` has new envelopes (poll it now). */
  readonly wake: (queue: string) => void;
  readonly events: JobEventPublisher;
  readonly clock: Clock;
  readonly random: () => number;
  readonly logger: Logger;
  /** Lease tokens (who is enqueuing or finalizing a job). */
  readonly newLease: () => string;
  readonly backoff: BackoffPolicy;
  /** MACs of envelopes and keyed job ids (loaded once per process). */
  readonly signer: () => Promise<Signer>;
  /** Where the capability's metrics and spans go (none when absent). */
  readonly telemetry?: Telemetry;
}

/** The capability's instruments and spans. */
export function jobsTelemetry(ctx: Pick<JobsContext, 'telemetry'>) {
  return (ctx.telemetry ?? noTelemetry).of(jobTelemetry);
}

/** How long an enqueuer's claim on a job lasts without progress (renewed with every batch sent). */
export const enqueueLeaseMs = 15_000;
