/** The storage clients' retry settings (shared/settings.ts explains the declarations; the connection is in shared/config.ts). */
import { group, int, type SettingsOf } from '../settings';

export const storageRetrySettings = group({
  maxTries: int(
    'TALLYHO_STORAGE_MAX_TRIES',
    3,
    1,
    10,
    'attempts per storage request, the first included (the SDKs retry 408, 5xx and network errors)',
  ),
  tryTimeoutMs: int('TALLYHO_STORAGE_TRY_TIMEOUT_MS', 10_000, 100, 300_000, 'a storage attempt slower than this is abandoned and retried'),
});

export type StorageRetrySettings = SettingsOf<typeof storageRetrySettings>;
