/**
 * The host's keys, as the real host has them: a master key, an optional function key, and system
 * keys that providers ask for by name (the Durable extension's `durabletask_extension`).
 *
 * - Function routes: keys are checked only when configured (`FUNCTIONS_KEY` and/or
 *   `FUNCTIONS_ADMIN_KEY`), as `func start` does not check them locally; then the function key or
 *   the master key opens a `function` route and only the master key an `admin` one. A refusal is 401
 *   whatever the key (devhost/docs/real-host.md#keys).
 * - The host's own admin API (`/admin/*`) always needs the master key, as on the real host. The
 *   master key is `FUNCTIONS_ADMIN_KEY`, or one made up for this run (the CLI prints it).
 * - Extension webhooks (system level) take their system key or the master key, when keys are checked;
 *   the links the extension hands out always carry the system key, as the real host's do.
 * - On `/admin/*` and the system routes a key the host knows that lacks the level is 403, no key or
 *   an unknown one 401, as the real host answers there (devhost/docs/real-host.md#keys).
 *
 * A key comes in the `x-functions-key` header or the `code` query parameter, picked as the real host
 * picks it (`KeyPolicy.presented`).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

import { getSetting, type Settings } from './app/settings';

/** An HTTP function's `authLevel` as the devhost applies it (`system` and `user` count as admin). */
export type AuthLevel = 'anonymous' | 'function' | 'admin';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function same(a: Buffer | undefined, b: string): boolean {
  return a !== undefined && timingSafeEqual(a, digest(b));
}

/** A key shaped like the real host's generated ones (base64url, 40 bytes). */
function newKey(): string {
  return randomBytes(40).toString('base64url');
}

const nonEmpty = (k: string | undefined): string | undefined => (k === undefined || k === '' ? undefined : k);

const clean = (k: string | undefined): string | undefined => (k === undefined || k.trim() === '' ? undefined : k.trim());

export class KeyPolicy {
  private readonly functionKey: Buffer | undefined;
  private readonly masterDigest: Buffer;
  /** The master key; made up for this run when none is configured. */
  readonly masterKey: string;
  /** Whether the master key came from the settings (rather than being made up for this run). */
  readonly masterKeyConfigured: boolean;
  /** Whether function routes and webhooks check keys (some key is configured). */
  readonly enforced: boolean;
  private readonly systemKeys = new Map<string, string>();

  constructor(keys: { functionKey?: string | undefined; adminKey?: string | undefined }) {
    const fk = clean(keys.functionKey);
    const ak = clean(keys.adminKey);
    this.functionKey = fk === undefined ? undefined : digest(fk);
    this.masterKey = ak ?? newKey();
    this.masterKeyConfigured = ak !== undefined;
    this.masterDigest = digest(this.masterKey);
    this.enforced = fk !== undefined || ak !== undefined;
  }

  static fromSettings(settings: Settings): KeyPolicy {
    return new KeyPolicy({ functionKey: getSetting(settings, 'FUNCTIONS_KEY'), adminKey: getSetting(settings, 'FUNCTIONS_ADMIN_KEY') });
  }

  /**
   * The key a request presents, picked as the real host picks it (devhost/docs/real-host.md#which-key-counts):
   * the `x-functions-key` header when it is present — even empty, which is then no key — and of
   * several such headers the first; else the first `code` value, its name matched in any letter
   * case. An empty value is no key.
   */
  static presented(req: { readonly headersDistinct: NodeJS.Dict<string[]> }, query: URLSearchParams): string | undefined {
    const headers = req.headersDistinct['x-functions-key'];
    if (headers !== undefined) return nonEmpty(headers[0]);
    for (const [name, value] of query) if (name.toLowerCase() === 'code') return nonEmpty(value);
    return undefined;
  }

  /** A function route of this auth level. */
  allows(level: AuthLevel, key: string | undefined): boolean {
    if (!this.enforced || level === 'anonymous') return true;
    if (key === undefined) return false;
    if (same(this.masterDigest, key)) return true;
    return level === 'function' && same(this.functionKey, key);
  }

  /**
   * The headers of a refusal of the host's own routes (the admin API, extension webhooks): the real
   * host's authentication middleware adds `WWW-Authenticate: Bearer` to its 401s there, not to a
   * function route's (devhost/docs/real-host.md#keys).
   */
  static refusalHeaders(status: 401 | 403): Record<string, string> {
    return status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {};
  }

  /** The host's admin API: the master key, always. Undefined when `key` is allowed, else the status to refuse with. */
  adminRefusal(key: string | undefined): 401 | 403 | undefined {
    if (key !== undefined && same(this.masterDigest, key)) return undefined;
    return this.known(key) ? 403 : 401;
  }

  /**
   * The system key named `name`. The real host makes one on first use and keeps it in its secret
   * store; here it is derived from the master key, so it is stable across restarts with a configured
   * FUNCTIONS_ADMIN_KEY, differs from the master key, and cannot be worked out without it.
   */
  systemKey(name: string): string {
    let key = this.systemKeys.get(name);
    if (key === undefined) {
      key = createHmac('sha256', this.masterKey).update(`system:${name}`).digest('base64url');
      this.systemKeys.set(name, key);
    }
    return key;
  }

  /**
   * An extension webhook: its system key or the master key, when keys are checked. Undefined when
   * `key` is allowed, else the status to refuse with.
   */
  systemRefusal(name: string, key: string | undefined): 401 | 403 | undefined {
    if (!this.enforced) return undefined;
    if (key !== undefined && (same(this.masterDigest, key) || same(digest(this.systemKey(name)), key))) return undefined;
    return this.known(key) ? 403 : 401;
  }

  /** Whether `key` is one of this host's keys (of whatever level). */
  private known(key: string | undefined): boolean {
    if (key === undefined) return false;
    if (same(this.masterDigest, key) || same(this.functionKey, key)) return true;
    for (const systemKey of this.systemKeys.values()) if (same(digest(systemKey), key)) return true;
    return false;
  }
}
