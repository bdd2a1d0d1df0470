/**
 * Who is calling, as far as the app can tell. The Functions host checks the key a caller presents
 * (the `x-functions-key` header, or `code` in the query) and passes the request on as it came, but
 * tells a handler nothing about which key it was. A short hash of the presented key tells callers
 * apart where one must not take a whole shared pool (a stream writer's producers): each client app
 * has its own function key (docs/security.md), and a caller cannot present a key the host refused.
 * The app keeps the hash only, never a key. Without a key (the host does not enforce keys, as in
 * local development) there is no caller to tell apart: undefined.
 */
import { createHash } from 'node:crypto';

import type { HeaderReader } from './route';

export function callerTag(headers: HeaderReader, url: URL): string | undefined {
  const key = headers.get('x-functions-key') ?? url.searchParams.get('code');
  if (key === null || key === '') return undefined;
  return createHash('sha256').update('tallyho caller\n').update(key).digest('base64url').slice(0, 16);
}
