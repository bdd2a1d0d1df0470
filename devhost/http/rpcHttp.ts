/**
 * The wire shapes of an HTTP invocation: the request as `RpcHttpData` (buffered mode) or as trigger
 * metadata (stream mode, where the library reads headers and route parameters from `Headers` and the
 * remaining entries), and the response the library returns in buffered mode.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';

import type { RpcHttpCookie, RpcHttpData, RpcTypedData } from '../core/types';

export function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[key] = Array.isArray(value) ? value.join(key === 'cookie' ? '; ' : ', ') : value;
  }
  return out;
}

/** Repeated query keys are joined with commas, as the host's query dictionary does. */
export function flatQuery(query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of query) out[key] = key in out ? `${out[key]},${value}` : value;
  return out;
}

export interface HttpRequestParts {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly query: Record<string, string>;
  readonly params: Record<string, string>;
  readonly body: Buffer | undefined;
}

export function toRpcHttpRequest(parts: HttpRequestParts): RpcTypedData {
  const http: RpcHttpData = { method: parts.method, url: parts.url, headers: parts.headers, query: parts.query, params: parts.params };
  if (parts.body !== undefined && parts.body.length > 0) http.body = { bytes: parts.body };
  return { http };
}

/** Trigger metadata for stream mode: `Headers`, `Query` and one string entry per route parameter. */
export function streamTriggerMetadata(parts: HttpRequestParts): Record<string, RpcTypedData> {
  const metadata: Record<string, RpcTypedData> = {
    Headers: { json: JSON.stringify(parts.headers) },
    Query: { json: JSON.stringify(parts.query) },
  };
  for (const [key, value] of Object.entries(parts.params)) if (!(key in metadata)) metadata[key] = { string: value };
  return metadata;
}

function typedBytes(data: RpcTypedData | null | undefined): Buffer {
  if (!data) return Buffer.alloc(0);
  if (data.bytes) return Buffer.from(data.bytes.buffer, data.bytes.byteOffset, data.bytes.byteLength);
  if (data.stream) return Buffer.from(data.stream);
  if (data.string !== undefined && data.string !== null) return Buffer.from(data.string, 'utf8');
  if (data.json !== undefined && data.json !== null) return Buffer.from(data.json, 'utf8');
  if (data.int !== undefined && data.int !== null) return Buffer.from(String(data.int));
  if (data.double !== undefined && data.double !== null) return Buffer.from(String(data.double));
  return Buffer.alloc(0);
}

const sameSiteNames: Record<string, string> = { lax: 'Lax', strict: 'Strict', explicitnone: 'None' };

function serializeCookie(cookie: RpcHttpCookie): string {
  const parts = [`${cookie.name ?? ''}=${encodeURIComponent(cookie.value ?? '')}`];
  if (cookie.domain?.value) parts.push(`Domain=${cookie.domain.value}`);
  if (cookie.path?.value) parts.push(`Path=${cookie.path.value}`);
  const seconds = cookie.expires?.value?.seconds;
  if (seconds !== undefined && seconds !== null) {
    const ms = Number(seconds) * 1000 + Math.floor(Number(cookie.expires?.value?.nanos ?? 0) / 1e6);
    parts.push(`Expires=${new Date(ms).toUTCString()}`);
  }
  const maxAge = cookie.maxAge?.value;
  if (maxAge !== undefined && maxAge !== null) parts.push(`Max-Age=${Math.floor(maxAge)}`);
  if (cookie.secure?.value === true) parts.push('Secure');
  if (cookie.httpOnly?.value === true) parts.push('HttpOnly');
  const sameSite = sameSiteNames[String(cookie.sameSite ?? '').toLowerCase()];
  if (sameSite !== undefined) parts.push(`SameSite=${sameSite}`);
  return parts.join('; ');
}

/**
 * Writes a buffered-mode response. No return value means 204 No Content, the documented default of
 * an HTTP function in Functions 2.x and later.
 */
export function writeRpcHttpResponse(res: ServerResponse, returnValue: RpcTypedData | null | undefined, method: string): void {
  const http = returnValue?.http;
  if (http === undefined || http === null) {
    res.statusCode = 204;
    res.end();
    return;
  }
  const status = Number(http.statusCode ?? 200);
  res.statusCode = Number.isInteger(status) && status >= 100 && status <= 999 ? status : 200;
  for (const [key, value] of Object.entries(http.headers ?? {})) {
    if (key.toLowerCase() === 'set-cookie' || key.toLowerCase() === 'content-length' || key.toLowerCase() === 'transfer-encoding') continue;
    res.setHeader(key, value);
  }
  const cookies = (http.cookies ?? []).map(serializeCookie);
  const headerCookie = http.headers?.['set-cookie'];
  if (headerCookie !== undefined) cookies.unshift(headerCookie);
  if (cookies.length > 0) res.setHeader('Set-Cookie', cookies);
  const body = typedBytes(http.body);
  const noBody = res.statusCode === 204 || res.statusCode === 304 || method === 'HEAD';
  if (!noBody) res.setHeader('Content-Length', body.length);
  res.end(noBody ? undefined : body);
}
