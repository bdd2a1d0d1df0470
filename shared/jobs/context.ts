/** What the job use-cases share within a process: settings, stores, queues, processors, time. */
import type { Clock } from '../clock';
import type { JobSettings } from './settings';
import type { Logger } from '../log';
import type { Signer } from '../signing/signer';
import type { BackoffPolicy } from '../retry';
import type { JobEventPublisher } from './events';
import type { JobFiles } from './files';
import type { JobStore } from './jobStore';
import type { ProcessorRegistry } from './processor';
import type { EnvelopeQueues } from './queues';
import type { ResultStore } from './resultStore';

export interface JobsContext {
  readonly settings: JobSettings;
  readonly jobs: JobStore;
  readonly results: ResultStore;
  readonly files: JobFiles;
  readonly queues: EnvelopeQueues;
  readonly processors: ProcessorRegistry;
  readonly events: JobEventPublisher;
  readonly clock: Clock;
  readonly random: () => number;
  readonly logger: Logger;
  /** Lease tokens (who is enqueuing or finalizing a job). */
  readonly newLease: () => string;
  readonly backoff: BackoffPolicy;
  /** MACs of envelopes and keyed job ids (loaded once per process). */
  readonly signer: () => Promise<Signer>;
}

/** How long an enqueuer's claim on a job lasts without progress (renewed with every batch sent). */
export const enqueueLeaseMs = 15_000;
