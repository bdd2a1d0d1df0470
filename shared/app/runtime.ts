/** What every service of the app shares: its clock, random source, logger, OCC back-off and ids. */
import type { Clock, Random } from '../clock';
import type { Logger } from '../log';
import type { BackoffPolicy } from '../retry';

export interface Runtime {
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  /** Every optimistic-concurrency loop's back-off, within the `occ` settings. */
  readonly backoff: BackoffPolicy;
  readonly newId: () => string;
}
