/**
 * The history of a run, Jepsen/Maelstrom style: every operation a client made — when it was sent,
 * when its answer came, who answered and what — plus the chaos driver's events. The checkers judge
 * the final state against it. Times are this machine's clock (ms), which the instances share.
 */
import { writeFileSync } from 'node:fs';

import { instanceHeader } from './frontDoor';

export type Capability = 'sequences' | 'counters' | 'gates' | 'schedules' | 'jobs' | 'streams' | 'chaos' | 'durable';

export interface Op {
  readonly id: number;
  readonly cap: Capability;
  /** What was done: `next`, `increment`, `lease`, `kill`, … */
  readonly kind: string;
  /** `proxy`, or the instance the request was sent to directly. */
  readonly target: 'proxy' | number;
  readonly start: number;
  end: number | undefined;
  /** The instance that answered (the front door's header, or the target). */
  instance: number | undefined;
  status: number | undefined;
  /** A transport failure or timeout: the outcome is unknown. */
  error: string | undefined;
  /** What the checker needs of the request and the answer. */
  data: Record<string, unknown>;
}

export class History {
  readonly ops: Op[] = [];
  private nextId = 0;

  begin(cap: Capability, kind: string, target: 'proxy' | number, data: Record<string, unknown> = {}): Op {
    const op: Op = {
      id: this.nextId++,
      cap,
      kind,
      target,
      start: Date.now(),
      end: undefined,
      instance: typeof target === 'number' ? target : undefined,
      status: undefined,
      error: undefined,
      data,
    };
    this.ops.push(op);
    return op;
  }

  finish(op: Op): void {
    op.end ??= Date.now();
  }

  /** The whole history as JSON lines, for a look after the run. */
  save(file: string): void {
    writeFileSync(file, this.ops.map((op) => JSON.stringify(op)).join('\n') + '\n');
  }

  /** An event of the run itself (a kill, a restart), instantaneous. */
  event(cap: Capability, kind: string, data: Record<string, unknown>): Op {
    const op = this.begin(cap, kind, 'proxy', data);
    this.finish(op);
    return op;
  }

  of(cap: Capability, kind?: string): Op[] {
    return this.ops.filter((o) => o.cap === cap && (kind === undefined || o.kind === kind));
  }
}

export interface Reply<T = unknown> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

export interface CallOptions {
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly key?: 'function' | 'admin';
  /** Send to this instance directly instead of through the front door. */
  readonly instance?: number;
  readonly timeoutMs?: number;
  readonly data?: Record<string, unknown>;
  readonly signal?: AbortSignal;
}

export interface Endpoints {
  readonly frontDoor: string;
  /** An instance's address while it is up. */
  instanceUrl(index: number): string | undefined;
  readonly keys: { readonly admin: string; readonly function: string };
}

/**
 * A client that records what it does. `call` never throws for an HTTP status; a transport failure
 * or a timeout is recorded as `error` (unknown outcome) and returned as undefined.
 */
export class RecordingClient {
  constructor(
    readonly history: History,
    readonly endpoints: Endpoints,
  ) {}

  headers(key: 'function' | 'admin' = 'function', extra: Readonly<Record<string, string>> = {}): Record<string, string> {
    return { 'x-functions-key': this.endpoints.keys[key], ...extra };
  }

  url(path: string, instance?: number): string | undefined {
    const base = instance === undefined ? this.endpoints.frontDoor : this.endpoints.instanceUrl(instance);
    return base === undefined ? undefined : `${base}${path}`;
  }

  async call<T = unknown>(
    cap: Capability,
    kind: string,
    method: string,
    path: string,
    options: CallOptions = {},
  ): Promise<{ op: Op; reply: Reply<T> | undefined }> {
    const op = this.history.begin(cap, kind, options.instance ?? 'proxy', { ...options.data });
    const url = this.url(path, options.instance);
    if (url === undefined) {
      op.error = 'instance down';
      this.history.finish(op);
      return { op, reply: undefined };
    }
    const headers = this.headers(options.key, options.headers);
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const signals = [AbortSignal.timeout(options.timeoutMs ?? 60_000), ...(options.signal === undefined ? [] : [options.signal])];
    try {
      const res = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }), signal: AbortSignal.any(signals) });
      const text = await res.text();
      op.end = Date.now();
      op.status = res.status;
      const served = res.headers.get(instanceHeader);
      if (served !== null) op.instance = Number(served);
      let parsed: unknown = text === '' ? undefined : text;
      if (text !== '' && /json/.test(res.headers.get('content-type') ?? '')) parsed = JSON.parse(text);
      this.history.finish(op);
      return { op, reply: { status: res.status, body: parsed as T, headers: res.headers } };
    } catch (err) {
      op.end = Date.now();
      op.error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      this.history.finish(op);
      return { op, reply: undefined };
    }
  }
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    // The listener goes with the timer: loops sleep on one long-lived signal many times.
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Retries `attempt` (after 503s, 429s, 502s and transport failures) until it answers something else or `deadline`. */
export async function untilAnswered<T>(
  attempt: () => Promise<{ op: Op; reply: Reply<T> | undefined }>,
  deadline: number,
): Promise<Reply<T> | undefined> {
  for (let pause = 100; ; pause = Math.min(pause * 2, 2000)) {
    const { reply } = await attempt();
    if (reply !== undefined && ![429, 502, 503, 504].includes(reply.status)) return reply;
    if (Date.now() + pause > deadline) return reply;
    const after = Number(reply?.headers.get('retry-after') ?? 'NaN');
    await sleep(Number.isFinite(after) ? Math.min(after * 1000, 5000) : pause);
  }
}
