/**
 * One place where requests leave the client: base URL, keys by header (never in the URL), the
 * credential's bearer token (./auth.ts), JSON bodies with their Content-Type, a timeout per attempt,
 * the caller's AbortSignal, bounded retries, and problem+json turned into `TallyhoError`.
 *
 * What is retried: 429 and 503 always (the server did not do the work and says when to come back),
 * honouring Retry-After up to the back-off cap; network failures and timeouts only for requests that
 * are safe to repeat (reads, requests carrying an Idempotency-Key, operations the API makes
 * idempotent). Each attempt of a keyed request sends the same key, so a retry after a lost response
 * gets the first answer, not a second effect.
 */
import { type Authorizer, authorizerFor, type CredentialOptions, type TokenCredential } from './auth.js';
import { type Clock, systemClock } from './clock.js';
import { isServerErrorCode, isTallyhoError, TallyhoError, type TallyhoErrorCode } from './errors.js';
import { backoffDelay, type BackoffPolicy, parseRetryAfter } from './retry.js';
import { linkSignals, throwIfAborted } from './signals.js';
import type { Problem } from './types.js';

export type KeyLevel = 'function' | 'admin';
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface RetryOptions {
  /** Retries after the first attempt (default 4). */
  readonly retries?: number;
  /** First back-off delay (default 200 ms). */
  readonly baseDelayMs?: number;
  /** Longest single wait, also the ceiling for Retry-After (default 10 s). */
  readonly maxDelayMs?: number;
}

export interface TransportOptions extends CredentialOptions {
  /**
   * The app's address, with or without the API's `/api` prefix: `https://tallyho.example.net` and
   * `https://tallyho.example.net/api` reach the same routes (the .NET client's rule too).
   */
  readonly baseUrl: string;
  /** Sent as `x-functions-key` on every request. */
  readonly functionKey?: string;
  /** Sent as `x-functions-key` on admin operations (falls back to functionKey). */
  readonly adminKey?: string;
  /**
   * Who the client is, sent as `Authorization: Bearer …` on every request (beside a key, if any): a
   * Microsoft Entra ID token credential such as `DefaultAzureCredential` from `@azure/identity`
   * (set `audience` or `scopes` too), or a Tallyho credential (`tly1.…`) an admin issued. Only over
   * https, or http to this machine.
   */
  readonly credential?: TokenCredential | string;
  /** Timeout of one attempt (default 30 s); long polls add their own wait to it. */
  readonly timeoutMs?: number;
  readonly retry?: RetryOptions;
  /** Extra fetch options for every request, e.g. `{ credentials: 'same-origin' }` in a browser. */
  readonly requestInit?: Omit<RequestInit, 'method' | 'body' | 'signal' | 'headers'>;
  readonly headers?: Readonly<Record<string, string>>;
  /** Defaults to the global fetch. */
  readonly fetch?: FetchLike;
  readonly clock?: Clock;
  readonly random?: () => number;
}

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface RequestSpec {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Relative to the base URL, segments already escaped (use `segment`). */
  readonly path: string;
  readonly query?: Query;
  readonly body?: unknown;
  readonly key?: KeyLevel;
  readonly idempotencyKey?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs?: number;
  /** Safe to repeat after a network failure or timeout (reads and keyed requests are). */
  readonly idempotent?: boolean;
  /** Statuses other than 2xx that are answers, not errors (e.g. 304). */
  readonly accept?: readonly number[];
  /** Override the client's retry bound for this request (e.g. 0 for a probe). */
  readonly retries?: number;
}

export interface Answer<T> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

/**
 * The API root a base URL names. Both clients take the app's address with or without the `/api`
 * route prefix (host.json `routePrefix`, fixed by the app), so a URL copied from the portal (the app)
 * and one copied from a curl example (the API) both work; a trailing slash changes nothing. A query
 * or fragment would end up inside every path, so it is refused here rather than becoming a 404.
 */
function apiRoot(baseUrl: string): string {
  const trimmed = baseUrl.trim().replace(/\/+$/, '');
  if (/[?#]/.test(trimmed)) throw new TypeError(`baseUrl must not have a query or fragment: ${baseUrl}`);
  return trimmed.endsWith('/api') ? trimmed : `${trimmed}/api`;
}

/** Escapes one path segment; names are validated by the server, this keeps a typo from becoming a path. */
export const segment = encodeURIComponent;

const retryableStatuses = new Set([429, 503]);

export class Transport {
  readonly clock: Clock;
  readonly random: () => number;
  private readonly fetchFn: FetchLike;
  private readonly baseUrl: string;
  private readonly policy: BackoffPolicy;
  private readonly retries: number;
  private readonly timeoutMs: number;
  private readonly authorizer: Authorizer | undefined;

  constructor(private readonly options: TransportOptions) {
    this.baseUrl = apiRoot(options.baseUrl);
    this.clock = options.clock ?? systemClock;
    this.authorizer = authorizerFor(options.credential, { ...options, baseUrl: this.baseUrl, clock: this.clock });
    this.random = options.random ?? Math.random;
    // Bound late: a test may install its fake fetch on globalThis after the client is built.
    this.fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.policy = { baseMs: options.retry?.baseDelayMs ?? 200, capMs: options.retry?.maxDelayMs ?? 10_000 };
    this.retries = options.retry?.retries ?? 4;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  url(path: string, query?: Query): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) params.set(name, String(value));
    const search = params.toString();
    return `${this.baseUrl}/${path}${search === '' ? '' : `?${search}`}`;
  }

  /** Sends the request (with retries) and parses a JSON answer. */
  async json<T>(spec: RequestSpec): Promise<Answer<T>> {
    return this.send(spec, async (response) => {
      const text = await response.text();
      return (text === '' ? undefined : JSON.parse(text)) as T;
    });
  }

  /**
   * Sends the request (with retries) and hands back the open response for streaming. The timeout
   * covers the wait for the headers only; the caller owns the body and its cancellation.
   */
  async open(spec: RequestSpec): Promise<Response> {
    const answer = await this.send(spec, (response) => Promise.resolve(response), { streaming: true });
    return answer.body;
  }

  private async send<T>(
    spec: RequestSpec,
    read: (response: Response) => Promise<T>,
    mode: { streaming?: boolean } = {},
  ): Promise<Answer<T>> {
    const request = `${spec.method} /${spec.path}`;
    // Messages name the whole URL tried, so a wrong base URL shows in the first error it causes.
    const tried = `${spec.method} ${this.url(spec.path, spec.query)}`;
    const idempotent = spec.idempotent ?? (spec.method === 'GET' || spec.idempotencyKey !== undefined);
    const retries = spec.retries ?? this.retries;
    for (let attempt = 0; ; attempt++) {
      throwIfAborted(spec.signal);
      const attemptSignal = linkSignals(spec.signal);
      const timeoutMs = spec.timeoutMs ?? this.timeoutMs;
      const timer = linkSignals(attemptSignal.signal);
      const timedOut = new TallyhoError('Timeout', `${tried}: no answer within ${timeoutMs} ms`, { request });
      this.clock.sleep(timeoutMs, timer.signal).then(
        () => attemptSignal.abort(timedOut),
        () => undefined,
      );
      const stopTimer = (): void => {
        timer.abort();
        timer.release();
      };
      let response: Response;
      try {
        response = await this.fetchFn(this.url(spec.path, spec.query), await this.init(spec, attemptSignal.signal));
      } catch (err) {
        stopTimer();
        attemptSignal.release();
        throwIfAborted(spec.signal);
        // The credential already tried as hard as its rules say (./auth.ts).
        if (isTallyhoError(err, 'Credential')) throw err;
        const failure =
          attemptSignal.signal.reason === timedOut
            ? timedOut
            : new TallyhoError('Network', `${tried}: ${err instanceof Error ? err.message : String(err)}`, { request, cause: err });
        if (!idempotent || attempt >= retries) throw failure;
        await this.clock.sleep(backoffDelay(this.policy, attempt, this.random), spec.signal);
        continue;
      }
      const accepted = response.ok || (spec.accept?.includes(response.status) ?? false);
      let keepLinked = false;
      try {
        if (accepted) {
          // A stream outlives this call: the caller's signal must still reach its body.
          keepLinked = mode.streaming === true;
          if (keepLinked) stopTimer();
          return { status: response.status, headers: response.headers, body: await read(response) };
        }
        const error = await errorOf(response, request, tried);
        if (!retryableStatuses.has(response.status) || attempt >= retries) throw error;
        const wait = error.retryAfterMs ?? backoffDelay(this.policy, attempt, this.random);
        stopTimer();
        await this.clock.sleep(Math.min(wait, this.policy.capMs), spec.signal);
      } catch (err) {
        throwIfAborted(spec.signal);
        if (attemptSignal.signal.reason !== timedOut) throw err;
        if (!idempotent || attempt >= retries) throw timedOut;
        await this.clock.sleep(backoffDelay(this.policy, attempt, this.random), spec.signal);
      } finally {
        stopTimer();
        if (!keepLinked) attemptSignal.release();
      }
    }
  }

  private async init(spec: RequestSpec, signal: AbortSignal): Promise<RequestInit> {
    const headers: Record<string, string> = { ...this.options.headers, ...spec.headers };
    const key = spec.key === 'admin' ? (this.options.adminKey ?? this.options.functionKey) : this.options.functionKey;
    if (key !== undefined && key !== '') headers['x-functions-key'] = key;
    if (this.authorizer !== undefined) headers.authorization = await this.authorizer.header(signal);
    if (spec.idempotencyKey !== undefined) headers['idempotency-key'] = spec.idempotencyKey;
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    return {
      ...this.options.requestInit,
      method: spec.method,
      headers,
      signal,
      ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
    };
  }
}

async function errorOf(response: Response, request: string, tried: string): Promise<TallyhoError> {
  const text = await response.text().catch(() => '');
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
  const base = { status: response.status, request, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  const parsed = /json/i.test(response.headers.get('content-type') ?? '') ? parseProblem(text) : undefined;
  if (parsed !== undefined) return new TallyhoError(parsed.code, `${tried}: ${parsed.detail}`, { ...base, problem: parsed });
  const detail = text.trim().slice(0, 500) || response.statusText || `HTTP ${response.status}`;
  return new TallyhoError(codeForStatus(response.status), `${tried}: ${detail}`, base);
}

/** A problem document of Tallyho's; one whose code is not the server's (a proxy's, a gateway's) is not. */
function parseProblem(text: string): Problem | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return undefined;
    const p = value as Partial<Record<keyof Problem, unknown>>;
    if (typeof p.code !== 'string' || !isServerErrorCode(p.code) || typeof p.status !== 'number') return undefined;
    return { type: '', title: '', detail: p.title ?? p.code, ...p } as Problem;
  } catch {
    return undefined;
  }
}

/** Answers without a problem document (a proxy, a host that never reached the app) still get a code. */
function codeForStatus(status: number): TallyhoErrorCode {
  if (status === 401) return 'Unauthorized';
  if (status === 403) return 'Forbidden';
  if (status === 404) return 'NotFound';
  if (status === 429) return 'TooManyRequests';
  return 'HttpError';
}
