/** What every service of the app shares: its clock, random source, logger, telemetry, OCC back-off and ids. */
import type { Clock, Random } from '../clock';
import type { Logger } from '../log';
import type { BackoffPolicy } from '../retry';
import type { Telemetry } from '../telemetry';

export interface Runtime {
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  /** Where each capability gets the instruments and spans it declared (its `metrics.ts`). */
  readonly telemetry: Telemetry;
  /** Every optimistic-concurrency loop's back-off, within the `occ` settings. */
  readonly backoff: BackoffPolicy;
  readonly newId: () => string;
}
