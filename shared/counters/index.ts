/**
 * The counters capability's front door: `createCounters(deps)` builds it from named ports (its
 * tables by name: settings, data and the dirty index, and the Idempotency-Key time to keep markers).
 */
import type { TableClient } from '@azure/data-tables';

import type { Clock, Random } from '../clock';
import type { Logger } from '../log';
import type { BackoffPolicy } from '../retry';
import type { Telemetry } from '../telemetry/port';
import { CounterService } from './service';
import type { CounterSettings } from './settings';

export { countersRoutes } from './routes';
export type { CounterService } from './service';

export interface CountersDeps {
  readonly settings: CounterSettings;
  /** A client for one of its tables (shared/resources.ts names them), which exists once the promise resolves. */
  readonly table: (name: string) => Promise<TableClient>;
  readonly idempotencyTtlSeconds: number;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly telemetry: Telemetry;
  readonly backoff: BackoffPolicy;
}

export function createCounters(deps: CountersDeps): CounterService {
  return new CounterService(deps);
}
