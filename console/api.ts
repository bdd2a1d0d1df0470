/**
 * The console talks to the API through @tallyho/client, like any client app. The admin key lives in
 * sessionStorage (gone when the browser session ends) and goes out as `x-functions-key`; with App
 * Service authentication the sign-in cookie is sent instead. Failures arrive as `TallyhoError`
 * (problem+json with the server's code) for the views to show.
 */
import { TallyhoClient, TallyhoError } from '../clients/typescript/src/index.js';

const keyItem = 'tallyho.adminKey';
const modeItem = 'tallyho.authMode';

type AuthMode = 'key' | 'signin';

export interface Credentials {
  readonly mode: AuthMode;
  readonly key: string | null;
}

export function readCredentials(): Credentials | null {
  const mode = sessionStorage.getItem(modeItem);
  if (mode === 'signin') return { mode, key: null };
  const key = sessionStorage.getItem(keyItem);
  return key === null || key === '' ? null : { mode: 'key', key };
}

export function saveKey(key: string): void {
  sessionStorage.setItem(keyItem, key);
  sessionStorage.setItem(modeItem, 'key');
}

export function chooseSignIn(): void {
  sessionStorage.removeItem(keyItem);
  sessionStorage.setItem(modeItem, 'signin');
}

export function forgetCredentials(): void {
  sessionStorage.removeItem(keyItem);
  sessionStorage.removeItem(modeItem);
}

export { TallyhoError as ApiError };

function apiBase(): string {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="tallyho-api-base"]');
  const base = (meta?.content ?? '/api').replace(/\/+$/, '');
  return new URL(base, window.location.href).toString().replace(/\/+$/, '');
}

let cached: { key: string | null; client: TallyhoClient } | undefined;

/** The client for the current credentials (rebuilt when the key changes). */
export function tallyho(): TallyhoClient {
  const key = readCredentials()?.key ?? null;
  if (cached?.key !== key) {
    // The operator's key is an admin key, which the host accepts for function-level routes too.
    const keys = key === null ? {} : { functionKey: key, adminKey: key };
    const client = new TallyhoClient({
      baseUrl: apiBase(),
      ...keys,
      // Errors are for the operator to see; a console retries by refreshing, not by waiting.
      retry: { retries: 1, maxDelayMs: 2000 },
      requestInit: { credentials: 'same-origin', cache: 'no-store' },
    });
    cached = { key, client };
  }
  return cached.client;
}

/** Shown for a 401 without a problem document: the host refused before the app saw the request. */
export function refusedDetail(error: TallyhoError): string | undefined {
  return error.status === 401 && error.problem === undefined
    ? 'The host refused the request: enter the admin key (or sign in).'
    : undefined;
}
