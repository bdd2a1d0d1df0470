/** A fetch that answers from a handler and records what was sent (method, path, query, headers, body). */
import type { FetchLike } from '../../src/transport';

interface SentRequest {
  readonly method: string;
  /** The whole URL, as the client built it. */
  readonly url: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly signal: AbortSignal | undefined;
}

export type Handler = (request: SentRequest, index: number) => Response | Promise<Response>;

export interface FakeFetch {
  readonly fetch: FetchLike;
  readonly requests: SentRequest[];
}

export function fakeFetch(handler: Handler): FakeFetch {
  const requests: SentRequest[] = [];
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(input);
    const headers = Object.fromEntries(
      Object.entries((init.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]),
    );
    const request: SentRequest = {
      method: init.method ?? 'GET',
      url: input,
      path: url.pathname.replace(/^\/api\//, ''),
      query: url.searchParams,
      headers,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
      signal: init.signal ?? undefined,
    };
    requests.push(request);
    return handler(request, requests.length - 1);
  };
  return { fetch, requests };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

export function problem(status: number, code: string, headers: Record<string, string> = {}): Response {
  const body = { type: `urn:tallyho:problem:${code}`, title: code, status, detail: `${code} happened`, code };
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/problem+json', ...headers } });
}

/** A fetch that never answers until its signal aborts (a hung connection). */
export function hang(signal: AbortSignal | undefined): Promise<Response> {
  return new Promise((_resolve, reject) => {
    signal?.addEventListener('abort', () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted')), { once: true });
  });
}
