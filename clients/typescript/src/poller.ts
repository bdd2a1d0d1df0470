/**
 * A long-running operation (docs/http-api.md#long-running-operations) as the Azure SDKs shape one: the
 * server answered 202 with the operation's status route and a `Retry-After`; the poller reads that
 * route, every `Retry-After` seconds, until the operation is done. `pollUntilDone()` waits (an
 * `abortSignal` stops the waiting, never the operation); `poll()` reads once; `toString()` is the
 * state to resume from later, in another process too (`resumeFrom`).
 */
import { TallyhoError } from './errors.js';
import type { OperationOptions } from './options.js';
import type { Transport } from './transport.js';

/** Which operation a poller follows; a resumed poller must be of the kind it is resumed as. */
export type OperationKind = 'jobSubmit' | 'jobCancel' | 'gateRun';

export interface OperationState<TState> {
  readonly kind: OperationKind;
  /** The status route the server named (`Location`, `statusUri`), e.g. `/api/jobs/…`. */
  readonly statusUri: string;
  /** Between reads: the server's `Retry-After`, unless the caller chose `intervalMs`. */
  readonly intervalMs: number;
  /** The latest state read (or the 202's body, until the first read). */
  readonly latest: TState | undefined;
  readonly isDone: boolean;
}

export interface PollerOptions extends OperationOptions {
  /** A poller's `toString()`: follow that operation instead of starting a new one. */
  readonly resumeFrom?: string;
  /** Between reads, overriding the server's `Retry-After`. */
  readonly intervalMs?: number;
}

/** An operation that may finish after the call that started it. */
export interface PollerLike<TState> {
  /** Reads the status route once (nothing, once done) and returns the state. */
  poll(options?: OperationOptions): Promise<TState>;
  /** Reads until done, waiting the interval between reads, and returns the final state. */
  pollUntilDone(options?: OperationOptions): Promise<TState>;
  isDone(): boolean;
  /** The final state once done; `undefined` before. */
  getResult(): TState | undefined;
  getOperationState(): OperationState<TState>;
  /** The state to resume from (`resumeFrom`); it holds the status route and the latest state, no key. */
  toString(): string;
}

/** The status route as a path below the API (`/api/jobs/x` → `jobs/x`), which the transport addresses. */
function apiPath(statusUri: string): string {
  const match = /^\/api\/(.+)$/.exec(statusUri);
  if (match?.[1] === undefined) throw new TallyhoError('BadResponse', `Not a status route of this API: ${statusUri}`);
  return match[1];
}

/** The 202's `Retry-After` in milliseconds (whole seconds, as the API sends it), or `fallbackMs`. */
export function retryAfterMs(headers: Headers, fallbackMs: number): number {
  const seconds = Number(headers.get('retry-after'));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : fallbackMs;
}

export class OperationPoller<TState> implements PollerLike<TState> {
  private state: OperationState<TState>;
  /** A poller just started waits the `Retry-After` before its first read; a resumed one reads at once. */
  private waitFirst: boolean;

  constructor(
    private readonly transport: Transport,
    start: Omit<OperationState<TState>, 'isDone'> & { readonly resumed?: boolean },
    private readonly done: (state: TState) => boolean,
  ) {
    apiPath(start.statusUri);
    const { resumed = false, ...state } = start;
    this.state = { ...state, isDone: state.latest !== undefined && done(state.latest) };
    this.waitFirst = !resumed;
  }

  /** A poller from `toString()`'s text, checked to be of `kind`. */
  static resume<TState>(
    transport: Transport,
    kind: OperationKind,
    text: string,
    done: (state: TState) => boolean,
    intervalMs?: number,
  ): OperationPoller<TState> {
    let saved: Partial<OperationState<TState>>;
    try {
      saved = JSON.parse(text) as Partial<OperationState<TState>>;
    } catch {
      throw new TypeError('resumeFrom is not the text of a poller (its toString())');
    }
    if (saved.kind !== kind || typeof saved.statusUri !== 'string') {
      throw new TypeError(`resumeFrom is not the state of a ${kind} operation`);
    }
    return new OperationPoller(
      transport,
      { kind, statusUri: saved.statusUri, intervalMs: intervalMs ?? saved.intervalMs ?? 1000, latest: saved.latest, resumed: true },
      done,
    );
  }

  async poll(options: OperationOptions = {}): Promise<TState> {
    if (this.state.isDone && this.state.latest !== undefined) return this.state.latest;
    const answer = await this.transport.json<TState>({ method: 'GET', path: apiPath(this.state.statusUri), signal: options.abortSignal });
    this.waitFirst = false;
    this.state = { ...this.state, latest: answer.body, isDone: this.done(answer.body) };
    return answer.body;
  }

  async pollUntilDone(options: OperationOptions = {}): Promise<TState> {
    if (this.waitFirst && !this.state.isDone) await this.transport.clock.sleep(this.state.intervalMs, options.abortSignal);
    let latest = await this.poll(options);
    while (!this.state.isDone) {
      await this.transport.clock.sleep(this.state.intervalMs, options.abortSignal);
      latest = await this.poll(options);
    }
    return latest;
  }

  isDone(): boolean {
    return this.state.isDone;
  }

  getResult(): TState | undefined {
    return this.state.isDone ? this.state.latest : undefined;
  }

  getOperationState(): OperationState<TState> {
    return this.state;
  }

  toString(): string {
    const { kind, statusUri, intervalMs, latest } = this.state;
    return JSON.stringify({ kind, statusUri, intervalMs, latest });
  }
}
