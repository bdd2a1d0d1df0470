/** What every jobs route shares: its dependencies and the answers they document alike. */
import { problem } from '../../http/schemas';
import type { ProcessorInfo } from '../processors/processor';
import type { JobService } from '../service';

export interface JobRouteDeps {
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without any I/O. */
  readonly service: () => JobService;
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
