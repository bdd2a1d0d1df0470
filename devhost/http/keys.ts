/**
 * Function keys, enforced only when configured (`FUNCTIONS_KEY` and/or `FUNCTIONS_ADMIN_KEY`), as the
 * local Core Tools host ignores `authLevel` by default. A key comes in the `x-functions-key` header or
 * the `code` query parameter; the admin (master) key satisfies every level, the function key only
 * `function`. With keys on but no admin key configured, admin-level endpoints cannot be reached.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

import { getSetting, type Settings } from '../app/settings';
import type { AuthLevel } from './functionRoutes';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function same(a: Buffer, b: string): boolean {
  return timingSafeEqual(a, digest(b));
}

export class KeyPolicy {
  private readonly functionKey: Buffer | undefined;
  private readonly adminKey: Buffer | undefined;

  constructor(keys: { functionKey?: string | undefined; adminKey?: string | undefined }) {
    const clean = (k: string | undefined): string | undefined => (k === undefined || k.trim() === '' ? undefined : k.trim());
    const fk = clean(keys.functionKey);
    const ak = clean(keys.adminKey);
    this.functionKey = fk === undefined ? undefined : digest(fk);
    this.adminKey = ak === undefined ? undefined : digest(ak);
  }

  static fromSettings(settings: Settings): KeyPolicy {
    return new KeyPolicy({ functionKey: getSetting(settings, 'FUNCTIONS_KEY'), adminKey: getSetting(settings, 'FUNCTIONS_ADMIN_KEY') });
  }

  get enforced(): boolean {
    return this.functionKey !== undefined || this.adminKey !== undefined;
  }

  /** The key a request presents: header first, then `code`. */
  static presented(headers: IncomingHttpHeaders, query: URLSearchParams): string | undefined {
    const header = headers['x-functions-key'];
    const value = Array.isArray(header) ? header[0] : header;
    if (value !== undefined && value !== '') return value;
    return query.get('code') ?? undefined;
  }

  allows(level: AuthLevel, key: string | undefined): boolean {
    if (!this.enforced || level === 'anonymous') return true;
    if (key === undefined) return false;
    if (this.adminKey !== undefined && same(this.adminKey, key)) return true;
    return level === 'function' && this.functionKey !== undefined && same(this.functionKey, key);
  }
}
