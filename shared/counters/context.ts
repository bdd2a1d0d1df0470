/** What the counter use-cases share: the stores, time, randomness, logging and retry bounds. */
import type { Clock, Random } from '../clock';
import type { Logger } from '../log';
import type { BackoffPolicy } from '../retry';
import type { CounterDataStore } from './dataStore';
import type { DirtyIndex } from './dirtyIndex';
import type { HitKeys } from './keys';

export interface CounterRuntime {
  readonly data: CounterDataStore;
  readonly dirty: DirtyIndex;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly backoff: BackoffPolicy;
  /** Unique, time-ordered ids for hit rows and total-row writes. */
  readonly keys: HitKeys;
}
