/** What every streams route shares: its dependencies and the answers they document alike. */
import { problem } from '../http/schemas';
import type { StreamService } from './service';

export interface StreamRouteDeps {
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without any I/O. */
  readonly service: () => StreamService;
}

export const tags = ['streams'];
export const badRequest = problem('Invalid type, query or events; nothing was written');
export const unavailable = problem(
  'The writer did not answer (or flush) in time, or a remap is under way; retry after Retry-After. Sending the same events again is safe',
);
