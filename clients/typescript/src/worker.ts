/**
 * A worker of an external processor: it leases batches (long polls, so an idle worker costs the
 * server one poll loop, not a request a second), hands each to your handler with an AbortSignal,
 * keeps the lease alive while the handler runs (a heartbeat at a third of the lease), and completes
 * it with the handler's results — one per item: `succeeded` with an output, `failed` with a code and
 * reason, or `retry` with a reason. Items the handler leaves out come back later as their next
 * attempt; a handler that throws sends every item back as a retry with the error's message.
 *
 * `stop()` drains gracefully: no new leases, waiting polls end, batches in hand finish and complete.
 * When a heartbeat learns the lease is gone (it ran out, or the job was cancelled) the handler's
 * signal aborts and its results are not sent.
 *
 * A lease request answered 404 (no such processor: a misspelt name, or one not declared yet) ends
 * the worker: `done` (and `stop()`) reject with a `TallyhoError` that names the processor, rather
 * than polling forever in silence. Errors the loop survives go to `onError`; without one, the first
 * error of each kind (its code and status) is logged with `console.warn`, later ones of that kind not.
 */
import { TallyhoError } from './errors.js';
import { backoffDelay } from './retry.js';
import { linkSignals } from './signals.js';
import { segment, type Transport } from './transport.js';
import type { ItemResult, LeasedItem, LeaseView } from './types.js';

export interface BatchContext {
  /** Aborts when the lease is lost (ran out, job cancelled) or the worker is stopped hard. */
  readonly abortSignal: AbortSignal;
  readonly processor: string;
  /** The lease's current id (it changes with each heartbeat). */
  readonly leaseId: () => string;
  /**
   * The W3C traceparent of the lease (the app's receive span; absent when the app does not trace):
   * make it the parent of your own span of the batch, and link each item's `traceparent` (its job's
   * submission), as the OpenTelemetry messaging conventions have a consumer do.
   */
  readonly traceparent?: string;
}

export type BatchHandler = (items: readonly LeasedItem[], context: BatchContext) => Promise<readonly ItemResult[]>;

export interface WorkerOptions {
  /** Batches in hand at once (default 1). */
  readonly concurrency?: number;
  /** At most this many items per batch (default and ceiling: the processor's batchSize). */
  readonly batchSize?: number;
  /** How long one lease request waits for a batch (default 20 s, at most 60). */
  readonly waitSeconds?: number;
  /** Between heartbeats (default a third of the lease). */
  readonly heartbeatMs?: number;
  /** Ends the worker like `stop()`. */
  readonly abortSignal?: AbortSignal;
  /**
   * Errors the loop survives (a failed lease request, a completion refused). Default: the first
   * error of each kind (code and status) is logged with `console.warn`; repeats of a kind are not.
   */
  readonly onError?: (error: unknown) => void;
}

/** The default `onError`: logs the first error of each kind, so a broken setup shows without flooding the log. */
function logFirstOfKind(log: (line: string) => void = (line) => console.warn(line)): (error: unknown) => void {
  const seen = new Set<string>();
  return (error) => {
    const kind = error instanceof TallyhoError ? `${error.code}:${error.status}` : error instanceof Error ? error.name : typeof error;
    if (seen.has(kind)) return;
    seen.add(kind);
    const text = error instanceof Error ? error.message : String(error);
    log(`tallyho worker: ${text} (kind ${kind}; later errors of this kind are not logged — pass onError to see every one)`);
  };
}

export interface WorkerStats {
  batches: number;
  items: number;
  completed: number;
  /** Batches whose lease was lost before they completed. */
  lost: number;
}

const idleCapMs = 5000;
const errorCapMs = 30_000;

export class JobWorker {
  readonly stats: WorkerStats = { batches: 0, items: 0, completed: 0, lost: 0 };
  /** Settles when every loop has ended (after `stop()`). */
  readonly done: Promise<void>;
  private readonly stopping = new AbortController();
  private readonly onError: (error: unknown) => void;
  private fatal: TallyhoError | undefined;

  constructor(
    private readonly transport: Transport,
    readonly processor: string,
    private readonly handler: BatchHandler,
    private readonly options: WorkerOptions = {},
  ) {
    this.onError = options.onError ?? logFirstOfKind();
    options.abortSignal?.addEventListener('abort', () => this.stopping.abort(), { once: true });
    const loops = Array.from({ length: Math.max(1, options.concurrency ?? 1) }, () => this.loop());
    this.done = Promise.all(loops).then(() => {
      if (this.fatal !== undefined) throw this.fatal;
    });
  }

  /** No new leases; waits until the batches in hand have completed. Rejects as `done` does. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.done;
  }

  private async loop(): Promise<void> {
    let idle = 0;
    let errors = 0;
    while (!this.stopping.signal.aborted) {
      let lease: LeaseView | undefined;
      try {
        lease = await this.take();
        errors = 0;
      } catch (err) {
        if (this.stopping.signal.aborted) break;
        if (err instanceof TallyhoError && err.status === 404) {
          this.end(err);
          break;
        }
        this.onError(err);
        await this.pause(backoffDelay({ baseMs: 500, capMs: errorCapMs }, errors++, Math.random));
        continue;
      }
      if (lease === undefined) {
        // The server held the request for the whole wait: back off a little more each empty answer.
        await this.pause(Math.min(idleCapMs, idle === 0 ? 0 : 100 * 2 ** idle));
        idle++;
        continue;
      }
      idle = 0;
      await this.work(lease);
    }
  }

  /** A 404 on the processor will not heal by polling: every loop stops and `done` rejects naming it. */
  private end(cause: TallyhoError): void {
    this.fatal ??= new TallyhoError(
      cause.code,
      `The worker stopped: processor '${this.processor}' was not found (${cause.status}). Check its name, and that it is declared (PUT /api/processors/${this.processor}).`,
      {
        status: cause.status,
        ...(cause.problem === undefined ? {} : { problem: cause.problem }),
        ...(cause.request === undefined ? {} : { request: cause.request }),
        cause,
      },
    );
    this.stopping.abort();
  }

  private pause(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return this.transport.clock.sleep(ms, this.stopping.signal).catch(() => undefined);
  }

  private async take(): Promise<LeaseView | undefined> {
    const wait = Math.min(60, this.options.waitSeconds ?? 20);
    const answer = await this.transport.json<LeaseView | undefined>({
      method: 'POST',
      path: `processors/${segment(this.processor)}/leases`,
      body: { wait, ...(this.options.batchSize === undefined ? {} : { maxItems: this.options.batchSize }) },
      signal: this.stopping.signal,
      timeoutMs: (wait + 30) * 1000,
      idempotent: false,
    });
    return answer.status === 204 ? undefined : answer.body;
  }

  private async work(lease: LeaseView): Promise<void> {
    this.stats.batches++;
    this.stats.items += lease.items.length;
    let leaseId = lease.leaseId;
    const lost = new AbortController();
    const beat = this.options.heartbeatMs ?? Math.max(1000, (lease.leaseSeconds * 1000) / 3);
    const heartbeats = new AbortController();
    const heart = (async () => {
      for (;;) {
        try {
          await this.transport.clock.sleep(beat, heartbeats.signal);
        } catch {
          return;
        }
        try {
          const next = await this.transport.json<{ leaseId: string }>({
            method: 'POST',
            path: `leases/${segment(leaseId)}/extend`,
            signal: heartbeats.signal,
            idempotent: false,
          });
          leaseId = next.body.leaseId;
        } catch (err) {
          if (heartbeats.signal.aborted) return;
          this.onError(err);
          // The lease is gone (409: ran out, spent, job cancelled; 404: job gone): stop the handler.
          if (err instanceof TallyhoError && (err.status === 409 || err.status === 404)) {
            lost.abort(err);
            return;
          }
        }
      }
    })();
    const signal = linkSignals(lost.signal);
    let results: readonly ItemResult[];
    try {
      const trace = lease.traceparent === undefined ? {} : { traceparent: lease.traceparent };
      results = await this.handler(lease.items, {
        abortSignal: signal.signal,
        processor: this.processor,
        leaseId: () => leaseId,
        ...trace,
      });
    } catch (err) {
      const reason = (err instanceof Error ? err.message : String(err)).slice(0, 1000) || 'The handler failed';
      results = lease.items.map((item) => ({ id: item.id, status: 'retry' as const, reason }));
    } finally {
      heartbeats.abort();
      signal.release();
      await heart;
    }
    if (lost.signal.aborted) {
      this.stats.lost++;
      return;
    }
    try {
      await this.transport.json({ method: 'POST', path: `leases/${segment(leaseId)}/complete`, body: { results }, idempotent: false });
      this.stats.completed++;
    } catch (err) {
      if (err instanceof TallyhoError && err.status === 409) this.stats.lost++;
      this.onError(err);
    }
  }
}
