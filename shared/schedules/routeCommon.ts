/** What every schedules route shares: its dependencies and the answers they document alike. */
import * as z from 'zod';

import type { DurableClient } from '../durable/client';
import { problem, resourceName } from '../http/schemas';
import type { ScheduleService } from './service';

export interface ScheduleRouteDeps {
  /** The service on the Durable client of the invocation being served. */
  readonly service: (durable: DurableClient) => ScheduleService;
}

export const tags = ['schedules'];
export const badRequest = problem('Invalid id, body or query; nothing was changed');
export const notFound = problem('No such schedule');
export const unavailable = problem('Storage (or Service Bus) unavailable or too much contention; retry after Retry-After');
export const params = z.object({ id: resourceName });
