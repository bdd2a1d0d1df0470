/** What every jobs route shares: its dependencies and the answers they document alike. */
import { problem } from '../../http/schemas';
import type { ProcessorInfo } from '../processors/processor';
import type { Leases } from '../delivery/leases';
import type { Declarations } from '../processors/declarations';
import type { JobReads } from './reads';
import type { Cancels } from '../submit/cancel';
import type { Submissions } from '../submit/submissions';

/** What the routes use of the capability (its front door, shared/jobs/index.ts). */
interface JobsOfRoutes {
  readonly submissions: Submissions;
  readonly reads: JobReads;
  readonly processors: Declarations;
  readonly leases: Leases;
  readonly cancels: Pick<Cancels, 'request'>;
}

export interface JobRouteDeps {
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without the app or any I/O. */
  readonly jobs: () => JobsOfRoutes;
  /** Largest submission body (TALLYHO_JOBS_MAX_REQUEST_BYTES). */
  readonly maxRequestBytes: number;
  /** The in-app processors, for the OpenAPI document. */
  readonly processors: readonly ProcessorInfo[];
  /** TALLYHO_JOBS_QUEUE_PREFIX (a declared processor's queue is named after it). */
  readonly queuePrefix: string;
}

export const tags = ['jobs'];
export const unavailable = problem('Storage unavailable; retry after Retry-After');
export const notFound = problem('No such job');
export const badId = problem('Not a job id');
