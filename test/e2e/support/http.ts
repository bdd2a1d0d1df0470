/** Small HTTP helpers for e2e tests: JSON requests with keys, problem+json assertions, an SSE reader. */
import type { Problem as AppProblem } from '../../../shared/errors';
import { waitingFor } from '../../support/waits';
import type { E2eHost } from './harness';

export interface JsonResponse<T = unknown> {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON when the response is JSON, else the text (undefined when empty). */
  readonly body: T;
}

export interface RequestOptions {
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Which key to send (`x-functions-key`) if the host has one; default `function`. `none` sends none. */
  readonly key?: 'function' | 'admin' | 'none';
  readonly signal?: AbortSignal;
}

export async function requestJson<T = unknown>(
  host: E2eHost,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key ?? 'function';
  const value = key === 'admin' ? host.keys.admin : key === 'function' ? (host.keys.function ?? host.keys.admin) : undefined;
  if (value !== undefined) headers['x-functions-key'] = value;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(host.url(path), {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  let parsed: unknown = text === '' ? undefined : text;
  if (text !== '' && /json/.test(type)) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed as T };
}

/**
 * A GET as a polling client makes it: a 503 (the app's storage did not answer within its tries) is
 * asked again after its Retry-After, as the API tells clients to, up to `tries` times. Azurite
 * serving both hosts' suites on two cores has answered that slowly during the 1,000-run reads.
 */
export async function pollJson<T = unknown>(
  host: E2eHost,
  path: string,
  options: RequestOptions = {},
  tries = 5,
): Promise<JsonResponse<T>> {
  for (let attempt = 1; ; attempt++) {
    const res = await requestJson<T>(host, 'GET', path, options);
    if (res.status !== 503 || attempt >= tries) return res;
    const after = Number(res.headers.get('retry-after') ?? '1');
    await new Promise((r) => setTimeout(r, Math.min(Number.isFinite(after) ? after : 1, 5) * 1000));
  }
}

/** What a test can rely on in a problem document: any member may be missing until asserted. */
export type Problem = Partial<AppProblem>;

/** Asserts an RFC 9457 problem document with this status (and code, when given); returns it. */
export function expectProblem(res: JsonResponse, status: number, code?: string): Problem {
  expect({ status: res.status, contentType: res.headers.get('content-type') }).toEqual({
    status,
    contentType: expect.stringMatching(/^application\/problem\+json/),
  });
  const problem = res.body as Problem;
  expect(problem.status).toBe(status);
  if (code !== undefined) expect(problem.code).toBe(code);
  return problem;
}

interface SseEvent {
  readonly id?: string;
  readonly event: string;
  readonly data: string;
  /** ms since the request was sent. */
  readonly at: number;
}

export interface SseOptions {
  readonly headers?: Readonly<Record<string, string>>;
  /** Stop after this many events (default: read to the end of the stream). */
  readonly maxEvents?: number;
  /** Ignored, kept so older callers compile: a stream is read until it ends or has `maxEvents` (test/support/waits.ts). */
  readonly timeoutMs?: number;
  /** Called with each event as it arrives (a test can act once a stream has its first event). */
  readonly onEvent?: (event: SseEvent) => void;
}

interface SseAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly events: SseEvent[];
}

/**
 * Reads a server-sent-event stream until it ends or has `maxEvents`; returns the events with arrival
 * times and the response status. No time budget: a stream still open when its test ends is given up
 * with the events it had (test/support/waits.ts).
 */
export function readSse(url: string, options: SseOptions = {}): Promise<SseAnswer> {
  const events: SseEvent[] = [];
  return waitingFor(
    `${options.maxEvents === undefined ? 'the end of' : `${options.maxEvents} event(s) of`} the event stream ${url}`,
    (signal) => readEvents(url, options, events, signal),
    () => `Events so far: ${JSON.stringify(events)}`,
  );
}

async function readEvents(url: string, options: SseOptions, events: SseEvent[], given: AbortSignal): Promise<SseAnswer> {
  const controller = new AbortController();
  const giveUp = (): void => controller.abort();
  given.addEventListener('abort', giveUp, { once: true });
  const started = performance.now();
  try {
    const res = await fetch(url, { headers: { accept: 'text/event-stream', ...options.headers }, signal: controller.signal });
    if (res.body === null) return { status: res.status, headers: res.headers, events };
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
          const fields = { id: undefined as string | undefined, event: 'message', data: [] as string[] };
          for (const line of block.split(/\r?\n/)) {
            if (line.startsWith(':') || line === '') continue;
            const colon = line.indexOf(':');
            const name = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (name === 'id') fields.id = value;
            else if (name === 'event') fields.event = value;
            else if (name === 'data') fields.data.push(value);
          }
          if (fields.data.length === 0 && fields.id === undefined) continue;
          const event: SseEvent = {
            ...(fields.id === undefined ? {} : { id: fields.id }),
            event: fields.event,
            data: fields.data.join('\n'),
            at: performance.now() - started,
          };
          events.push(event);
          options.onEvent?.(event);
          if (options.maxEvents !== undefined && events.length >= options.maxEvents) {
            controller.abort();
            return { status: res.status, headers: res.headers, events };
          }
        }
      }
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    }
    return { status: res.status, headers: res.headers, events };
  } finally {
    given.removeEventListener('abort', giveUp);
  }
}

/** Everything a caller can read in an answer (headers, then the body), for checks that no key leaks. */
export function readableAnswer(headers: Headers, body: unknown): string {
  const lines = [...headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n');
  return `${lines}\n\n${typeof body === 'string' ? body : JSON.stringify(body)}`;
}
