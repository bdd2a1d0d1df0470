/** The callers registry's settings (shared/settings.ts explains the declarations). */
import { group, int, type SettingsOf } from '../settings';

export const callerSettings = group({
  maxCallers: int(
    'TALLYHO_CALLERS_MAX',
    1000,
    1,
    100_000,
    'live credentials `POST /api/callers` may issue (409 above); revoking a caller, or its credential expiring, gives its place back',
  ),
  revocationCacheSeconds: int(
    'TALLYHO_CREDENTIALS_REVOCATION_CACHE_SECONDS',
    30,
    0,
    300,
    'how long an instance trusts its last look at whether a credential is revoked: a revoked credential is refused on every instance within this bound',
  ),
});

export type CallerSettings = SettingsOf<typeof callerSettings>;
