/**
 * `release.Wait()` for HTTP clients. A waiter reads the gate first — a late joiner (the gate was
 * released before it came) returns at once — and only then subscribes:
 *
 * 1. server-sent events (`/events`), reconnecting after a drop with jittered exponential back-off up
 *    to a cap, sending `Last-Event-ID`, and treating a connection that is silent for longer than
 *    `heartbeatTimeoutMs` (the server sends a heartbeat every 15 s by default) as dropped;
 * 2. if the host does not serve event streams (a proxy that buffers them, an older host), long
 *    polls of `/wait`;
 * 3. if that is missing too, plain reads with `If-None-Match`, which cost a 304 while nothing changed.
 *
 * `watch()` is the same machinery as an async iterator of state changes (each distinct ETag once).
 */
import { abortReason } from './clock.js';
import { TallyhoError } from './errors.js';
import { type ListOptions, type PagedAsyncIterableIterator, pagedList } from './paging.js';
import { backoffDelay, type BackoffPolicy } from './retry.js';
import { readEvents } from './sse.js';
import { linkSignals, throwIfAborted } from './signals.js';
import type { OperationOptions } from './options.js';
import { segment, type Transport } from './transport.js';
import { OperationPoller, type PollerLike, type PollerOptions, retryAfterMs } from './poller.js';
import type {
  GateAuditPage,
  GateAuditRecord,
  GateReleaseResult,
  GateResetResult,
  GateRunRequest,
  GateRunStarted,
  GateRunView,
  GateView,
  GateWaitResult,
} from './types.js';

export type GateTransportMode = 'sse' | 'longPoll' | 'poll';

export interface GateOptions {
  /** Where to start (default `sse`); a mode the host does not serve falls back to the next. */
  readonly mode?: GateTransportMode;
  /** A stream silent this long is treated as dropped (default 45 s: three missed heartbeats). */
  readonly heartbeatTimeoutMs?: number;
  /** Reconnect back-off of the event stream and of failed polls (default 1 s doubling to 30 s, jittered). */
  readonly reconnect?: Partial<BackoffPolicy>;
  /** Seconds one long poll waits on the server (default 30). */
  readonly longPollSeconds?: number;
  /** Interval of plain ETag reads (default 2 s). */
  readonly pollIntervalMs?: number;
}

export interface WaitOptions extends OperationOptions {
  /** Give up after this many milliseconds with a `Timeout` error. */
  readonly timeout?: number;
}

export interface Observed {
  readonly gate: GateView;
  readonly etag: string | undefined;
}

export interface RunOptions extends OperationOptions {
  /** Your name for the run: a repeated start with the same runId and action returns the first run. */
  readonly runId?: string;
  /** What the run does once released (default `none`). */
  readonly action?: GateRunRequest['action'];
}

/** A run is done once it has failed, or proceeded and its action is done (`action` is `{ type: 'none' }` at once for none). */
function runFinished(run: GateRunView): boolean {
  return run.state === 'failed' || (run.state === 'proceeded' && run.action !== null);
}

export interface ActorOptions extends OperationOptions {
  readonly by?: string;
  readonly note?: string;
}

/** The host answered, but not with what this mode needs: fall back to the next mode. */
class ModeUnavailable extends Error {}

/** Route missing (no problem document) or not an event stream: the host does not serve this mode. */
function unsupported(err: unknown): boolean {
  return err instanceof TallyhoError && err.problem === undefined && [404, 405, 406, 501].includes(err.status);
}

/** Errors that reconnecting cannot fix: a problem the server stated (no such gate, bad key, bad name). */
function terminal(err: unknown): boolean {
  return err instanceof TallyhoError && err.problem !== undefined && err.status >= 400 && err.status < 500 && err.status !== 429;
}

export class Gate {
  private readonly reconnect: BackoffPolicy;

  constructor(
    private readonly transport: Transport,
    readonly name: string,
    private readonly options: GateOptions = {},
  ) {
    this.reconnect = { baseMs: options.reconnect?.baseMs ?? 1000, capMs: options.reconnect?.capMs ?? 30_000 };
  }

  private get path(): string {
    return `gates/${segment(this.name)}`;
  }

  /** The gate now; with `ifNoneMatch`, undefined while it is unchanged (304). */
  async read(options: OperationOptions & { ifNoneMatch?: string } = {}): Promise<Observed | undefined> {
    const answer = await this.transport.json<GateView | undefined>({
      method: 'GET',
      path: this.path,
      headers: options.ifNoneMatch === undefined ? {} : { 'if-none-match': options.ifNoneMatch },
      accept: [304],
      signal: options.abortSignal,
    });
    if (answer.status === 304 || answer.body === undefined) return undefined;
    return { gate: answer.body, etag: answer.headers.get('etag') ?? undefined };
  }

  async get(options: OperationOptions = {}): Promise<GateView> {
    const observed = await this.read(options);
    if (observed === undefined) throw new TallyhoError('BadResponse', `GET /${this.path} answered 304 without If-None-Match`);
    return observed.gate;
  }

  /** Resolves with the released gate: at once if it is released already, else at the release. */
  async wait(options: WaitOptions = {}): Promise<GateView> {
    const linked = linkSignals(options.abortSignal);
    const deadline = linkSignals(linked.signal);
    if (options.timeout !== undefined) {
      const timeout = new TallyhoError('Timeout', `gate ${this.name} was not released within ${options.timeout} ms`);
      this.transport.clock.sleep(options.timeout, deadline.signal).then(
        () => linked.abort(timeout),
        () => undefined,
      );
    }
    try {
      const first = await this.read({ abortSignal: linked.signal });
      if (first?.gate.state === 'released') return first.gate;
      for await (const gate of this.follow(first, linked.signal)) if (gate.state === 'released') return gate;
      throw abortReason(linked.signal);
    } finally {
      deadline.abort();
      deadline.release();
      linked.release();
    }
  }

  /** Every change of the gate's state, starting with the current one, until `abortSignal` aborts. */
  async *watch(options: OperationOptions = {}): AsyncGenerator<GateView, void, undefined> {
    const first = await this.read(options);
    if (first !== undefined) yield first.gate;
    yield* this.follow(first, options.abortSignal);
  }

  private async *follow(first: Observed | undefined, signal: AbortSignal | undefined): AsyncGenerator<GateView, void, undefined> {
    let last = first;
    let mode: GateTransportMode = this.options.mode ?? 'sse';
    let failures = 0;
    for (;;) {
      throwIfAborted(signal);
      let ended = false;
      try {
        const source =
          mode === 'sse'
            ? this.streamOnce(last?.etag, signal)
            : mode === 'longPoll'
              ? this.longPollOnce(last, signal)
              : this.pollOnce(last, signal);
        for await (const observed of source) {
          failures = 0;
          if (observed.etag !== undefined && observed.etag === last?.etag) continue;
          last = observed;
          yield observed.gate;
        }
        ended = true;
      } catch (err) {
        throwIfAborted(signal);
        if (err instanceof ModeUnavailable || unsupported(err)) {
          mode = mode === 'sse' ? 'longPoll' : 'poll';
          continue;
        }
        if (terminal(err)) throw err;
        failures++;
      }
      // A clean end (the server closes streams after a release and after a time limit) reconnects
      // after the base delay; each further failure in a row doubles it, up to the cap. Polls pace themselves.
      if (mode === 'sse' || !ended) {
        await this.transport.clock.sleep(backoffDelay(this.reconnect, Math.max(0, failures - 1), this.transport.random), signal);
      }
    }
  }

  /** One event-stream connection: its events until the server ends it, it drops, or it goes silent. */
  private async *streamOnce(lastEventId: string | undefined, signal: AbortSignal | undefined): AsyncGenerator<Observed> {
    const connection = linkSignals(signal);
    const silentMs = this.options.heartbeatTimeoutMs ?? 45_000;
    const clock = this.transport.clock;
    let lastActivity = clock.now();
    const watchdog = (async () => {
      for (;;) {
        await clock.sleep(lastActivity + silentMs - clock.now(), connection.signal);
        if (clock.now() - lastActivity >= silentMs) {
          connection.abort(new TallyhoError('Timeout', `gate ${this.name}: event stream silent for ${silentMs} ms`));
          return;
        }
      }
    })().catch(() => undefined);
    try {
      const response = await this.transport.open({
        method: 'GET',
        path: `${this.path}/events`,
        headers: { accept: 'text/event-stream', ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) },
        signal: connection.signal,
        // Reconnecting is this loop's job, with its own back-off.
        retries: 0,
      });
      if (!/text\/event-stream/i.test(response.headers.get('content-type') ?? '') || response.body === null) {
        await response.body?.cancel().catch(() => undefined);
        throw new ModeUnavailable();
      }
      lastActivity = clock.now();
      const onActivity = (): void => void (lastActivity = clock.now());
      for await (const event of readEvents(response.body, { onActivity, abortSignal: connection.signal })) {
        if (event.event !== 'state' && event.event !== 'released') continue;
        yield { gate: JSON.parse(event.data) as GateView, etag: event.id === '' ? undefined : event.id };
      }
    } catch (err) {
      // A silent connection is aborted with its own reason; report that rather than the AbortError.
      const reason: unknown = connection.signal.reason;
      throw connection.signal.aborted && reason instanceof TallyhoError ? reason : err;
    } finally {
      connection.abort();
      connection.release();
      await watchdog;
    }
  }

  /** One long poll: the gate at its release or at the server's timeout. */
  private async *longPollOnce(last: Observed | undefined, signal: AbortSignal | undefined): AsyncGenerator<Observed> {
    const seconds = this.options.longPollSeconds ?? 30;
    const generation = last?.gate.state === 'closed' ? last.gate.generation : undefined;
    const answer = await this.transport.json<GateWaitResult>({
      method: 'GET',
      path: `${this.path}/wait`,
      query: { timeout: seconds, generation },
      timeoutMs: seconds * 1000 + 15_000,
      signal,
    });
    yield { gate: answer.body.gate, etag: answer.headers.get('etag') ?? undefined };
  }

  /** One conditional read after the poll interval. */
  private async *pollOnce(last: Observed | undefined, signal: AbortSignal | undefined): AsyncGenerator<Observed> {
    await this.transport.clock.sleep(this.options.pollIntervalMs ?? 2000, signal);
    const observed = await this.read({ ...(last?.etag === undefined ? {} : { ifNoneMatch: last.etag }), abortSignal: signal });
    if (observed !== undefined) yield observed;
  }

  /** Creates the gate closed (admin); repeating it answers the gate as it is. The gate is written when it returns. */
  async create(options: ActorOptions & { releaseAt?: string } = {}): Promise<GateView> {
    return this.command('PUT', this.path, options);
  }

  /** Releases the gate (admin). Idempotent: a second release answers the first. Done when it returns. */
  async release(options: ActorOptions = {}): Promise<GateReleaseResult> {
    return this.command('POST', `${this.path}/release`, options);
  }

  /** Closes the gate again as a new generation (admin). Done when it returns. */
  async reset(options: ActorOptions & { releaseAt?: string } = {}): Promise<GateResetResult> {
    return this.command('POST', `${this.path}/reset`, options);
  }

  /**
   * Starts a gated durable run and returns at once: it waits for a release that is someone else's to
   * give (an admin's, a schedule's), possibly hours away. `beginStartRun` follows it to the end.
   * With `runId`, a repeated start with the same action returns the first run (`created: false`).
   */
  async startRun(options: RunOptions = {}): Promise<GateRunStarted> {
    return (await this.postRun(options)).body;
  }

  /**
   * Starts a gated run and returns a poller of it, done once it has `proceeded` (its action done) or
   * `failed`: `await poller.pollUntilDone({ abortSignal })` is the run's final state. With
   * `resumeFrom` (a poller's `toString()`) nothing is started: the poller follows that run again.
   */
  async beginStartRun(options: RunOptions & PollerOptions = {}): Promise<PollerLike<GateRunView>> {
    if (options.resumeFrom !== undefined) {
      return OperationPoller.resume(this.transport, 'gateRun', options.resumeFrom, runFinished, options.intervalMs);
    }
    const answer = await this.postRun(options);
    const intervalMs = options.intervalMs ?? retryAfterMs(answer.headers, 10_000);
    return new OperationPoller(
      this.transport,
      { kind: 'gateRun', statusUri: answer.body.statusUri, intervalMs, latest: undefined },
      runFinished,
    );
  }

  /** A gated run's state: `waiting`, `proceeded` (with the release and its action's result) or `failed`. */
  async getRun(runId: string, options: OperationOptions = {}): Promise<GateRunView> {
    const path = `${this.path}/runs/${segment(runId)}`;
    return (await this.transport.json<GateRunView>({ method: 'GET', path, signal: options.abortSignal })).body;
  }

  private postRun(options: RunOptions) {
    const { abortSignal, runId, action } = options;
    const body: GateRunRequest = { ...(runId === undefined ? {} : { runId }), ...(action === undefined ? {} : { action }) };
    // A start with a runId is idempotent (the same run comes back); without one a retry could start a second run.
    return this.transport.json<GateRunStarted>({
      method: 'POST',
      path: `${this.path}/runs`,
      body,
      idempotent: runId !== undefined,
      signal: abortSignal,
    });
  }

  /** The gate's audit log, oldest first (admin). */
  audit(options: ListOptions = {}): PagedAsyncIterableIterator<GateAuditRecord, GateAuditPage> {
    return pagedList(this.transport, { path: `${this.path}/audit`, key: 'admin' }, options);
  }

  private async command<T>(method: 'PUT' | 'POST', path: string, options: ActorOptions & { releaseAt?: string }): Promise<T> {
    const { abortSignal, ...body } = options;
    const answer = await this.transport.json<T>({ method, path, body, key: 'admin', idempotent: true, signal: abortSignal });
    return answer.body;
  }
}
