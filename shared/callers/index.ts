/**
 * Callers as a resource: `createCallers(deps)` builds the registry an admin issues, lists and revokes
 * credentials through (`/api/callers`), and the revocation check every credential passes on use.
 */
import type { TableClient } from '@azure/data-tables';

import type { Runtime } from '../runtime';
import { CallerRegistry, callerNames } from './registry';
import { Revocations } from './revocations';
import type { CallerSettings } from './settings';
import { CallerStore } from './store';

export { callersRoutes } from './routes';

export interface CallersDeps extends Runtime {
  readonly settings: CallerSettings;
  /** The `callers` table. */
  readonly table: () => Promise<TableClient>;
  /** TALLYHO_CREDENTIALS_KEY (undefined: no credential is issued). */
  readonly credentialsKey: Buffer | undefined;
}

export interface Callers {
  readonly registry: CallerRegistry;
  /** Whether a credential (by id) is revoked: what the caller resolver asks of every verified credential. */
  readonly isRevoked: (credentialId: string) => Promise<boolean>;
}

export function createCallers(deps: CallersDeps): Callers {
  const store = new CallerStore(deps.table);
  const revocations = new Revocations((id) => store.isRevoked(id), deps.clock, deps.settings.revocationCacheSeconds * 1000);
  const registry = new CallerRegistry({
    ...deps,
    store,
    names: callerNames(deps, deps.table),
    revocations,
  });
  return { registry, isRevoked: (id) => revocations.isRevoked(id) };
}
