/**
 * Calls an allow-listed HTTPS webhook, defensively (SSRF):
 * - the URL must pass the allow-list (https, listed host and port, no credentials);
 * - the host is resolved here and every address must be public (unless private addresses are
 *   allowed for local development); the connection then goes to the address that was checked, so
 *   a DNS answer cannot change between the check and the connect (rebinding);
 * - redirects are not followed blindly: each `Location` is checked like the first URL, up to a bound;
 * - the whole call (all hops, body included) has one deadline and the response body a size cap.
 * TLS is verified against the host name as usual. Plain http goes only to loopback (local
 * development, with private addresses allowed): every address its host resolves to must be one.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { isIP, type LookupFunction } from 'node:net';

import { isPublicAddress } from './addresses';
import { type AllowedHost, isLoopbackHost, urlRejection } from './allowList';

export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

export interface WebhookOptions {
  readonly allowed: readonly AllowedHost[];
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly maxRedirects: number;
  readonly allowPrivateAddresses: boolean;
  /** DNS; injectable so tests can point a name at a local server. */
  readonly resolve?: (host: string) => Promise<readonly ResolvedAddress[]>;
  /** Extra trusted certificate authorities (PEM), e.g. a private CA. */
  readonly ca?: string | readonly string[];
  /** Who calls (default `tallyho-schedules/1`). */
  readonly userAgent?: string;
}

/** What a caller adds to the POST: headers (a signature) and the exact body text (what was signed). */
export interface WebhookRequest {
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface WebhookResponse {
  readonly status: number;
  /** The URL that answered (after redirects). */
  readonly url: string;
  readonly redirects: number;
  /** The start of the body, up to the size cap. */
  readonly body: string;
  readonly truncated: boolean;
  /** The answer's Retry-After header, if any. */
  readonly retryAfter?: string;
}

/** The call was not made (or not continued) because it would break the rules above. */
export class WebhookRefused extends Error {
  override readonly name = 'WebhookRefused';
}

const defaultResolve = async (host: string): Promise<readonly ResolvedAddress[]> => dnsLookup(host, { all: true, verbatim: true });

async function addressFor(url: URL, options: WebhookOptions): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  const addresses = literal !== 0 ? [{ address: host, family: literal }] : await (options.resolve ?? defaultResolve)(host);
  if (addresses.length === 0) throw new WebhookRefused(`${host} does not resolve`);
  if (url.protocol === 'http:') {
    const away = addresses.find((a) => !isLoopbackHost(a.address));
    if (away !== undefined) throw new WebhookRefused(`${host} resolves to ${away.address}: plain http goes to loopback only`);
  }
  if (!options.allowPrivateAddresses) {
    const internal = addresses.find((a) => !isPublicAddress(a.address));
    if (internal !== undefined) {
      throw new WebhookRefused(`${host} resolves to ${internal.address}, which is not a public address`);
    }
  }
  return addresses[0] as ResolvedAddress;
}

function pinned(target: ResolvedAddress): LookupFunction {
  // Node asks with `all: true` when it may try several addresses; answer with the checked one only.
  return ((_host: string, opts: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (opts.all === true) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
}

interface Hop {
  readonly response: IncomingMessage;
}

function send(
  url: URL,
  method: string,
  body: string | undefined,
  target: ResolvedAddress,
  options: WebhookOptions,
  signal: AbortSignal,
  extraHeaders: Readonly<Record<string, string>>,
): Promise<Hop> {
  const call = url.protocol === 'http:' ? httpRequest : request;
  return new Promise((resolve, reject) => {
    const req = call(
      url,
      {
        method,
        lookup: pinned(target),
        agent: false,
        signal,
        ...(options.ca === undefined ? {} : { ca: typeof options.ca === 'string' ? options.ca : [...options.ca] }),
        headers: {
          ...extraHeaders,
          'user-agent': options.userAgent ?? 'tallyho-schedules/1',
          accept: 'application/json, */*;q=0.5',
          ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
        },
      },
      (response) => resolve({ response }),
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function readCapped(response: IncomingMessage, cap: number): Promise<{ body: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of response) {
    const buffer = chunk as Buffer;
    if (size + buffer.length > cap) {
      chunks.push(buffer.subarray(0, cap - size));
      size = cap;
      truncated = true;
      response.destroy();
      break;
    }
    chunks.push(buffer);
    size += buffer.length;
  }
  return { body: Buffer.concat(chunks).toString('utf8'), truncated };
}

/** POSTs `payload` as JSON; answers with the final response, whatever its status. */
export async function callWebhook(
  rawUrl: string,
  payload: unknown,
  options: WebhookOptions,
  request: WebhookRequest = {},
): Promise<WebhookResponse> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  let url = new URL(rawUrl);
  let method = 'POST';
  let body: string | undefined = request.body ?? JSON.stringify(payload);
  let extraHeaders = request.headers ?? {};
  for (let redirects = 0; ; redirects++) {
    const rejection = urlRejection(url, options.allowed, options.allowPrivateAddresses);
    if (rejection !== undefined) throw new WebhookRefused(redirects === 0 ? rejection : `Redirect refused: ${rejection}`);
    const target = await addressFor(url, options);
    let hop: Hop;
    try {
      hop = await send(url, method, body, target, options, signal, extraHeaders);
    } catch (err) {
      if (signal.aborted) throw new Error(`No answer within ${options.timeoutMs} ms`, { cause: err });
      throw err;
    }
    const { response } = hop;
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (status >= 300 && status < 400 && location !== undefined) {
      response.resume();
      if (redirects >= options.maxRedirects) throw new WebhookRefused(`More than ${options.maxRedirects} redirects`);
      url = new URL(location, url);
      // 307/308 repeat the request; the others turn it into a GET without a body, as browsers do.
      if (status !== 307 && status !== 308) {
        method = 'GET';
        body = undefined;
        // A signature belongs to the body it signed: it does not follow the request into a GET.
        extraHeaders = {};
      }
      continue;
    }
    try {
      const read = await readCapped(response, options.maxResponseBytes);
      const retryAfter = response.headers['retry-after'];
      return { status, url: url.toString(), redirects, ...read, ...(retryAfter === undefined ? {} : { retryAfter }) };
    } catch (err) {
      if (signal.aborted) throw new Error(`No complete answer within ${options.timeoutMs} ms`, { cause: err });
      throw err;
    }
  }
}
