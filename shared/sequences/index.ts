/**
 * The sequences capability's front door: `createSequences(deps)` builds it from named ports (its
 * table, the Idempotency-Key table and how long a stored answer is kept).
 */
import type { TableClient } from '@azure/data-tables';

import { IdempotencyStore } from '../idempotency';
import { SequenceService } from './service';
import type { SequenceSettings } from './settings';
import { SequenceStore } from './store';
import type { Runtime } from '../runtime';

export { sequencesRoutes } from './routes';
export type { SequenceService } from './service';

/** With the runtime every service shares (clock, random, logger, telemetry, back-off, ids). */
export interface SequencesDeps extends Runtime {
  readonly settings: SequenceSettings;
  /** The `sequences` table. */
  readonly table: () => Promise<TableClient>;
  /** Stored answers to keyed `next` calls, kept this long. */
  readonly idempotency: { readonly table: () => Promise<TableClient>; readonly ttlSeconds: number };
}

export function createSequences(deps: SequencesDeps): SequenceService {
  return new SequenceService({
    ...deps,
    store: new SequenceStore(deps.table),
    idempotency: new IdempotencyStore(deps.idempotency.table, deps.clock, deps.idempotency.ttlSeconds),
    autoCreate: deps.settings.autoCreate,
    maxAutoCreated: deps.settings.maxAutoCreated,
    instanceId: deps.newId(),
  });
}
