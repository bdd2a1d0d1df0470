/**
 * Gate checks for production code paths: `isReleased(gate, { default })` answers from a cache for
 * `cacheMs`, revalidates with `If-None-Match` (a 304 costs almost nothing), and never throws for the
 * service's sake. When the answer cannot be had — the service is unreachable, times out, answers
 * 5xx, or has no such gate — it answers the last state it saw, or the caller's `default` when it
 * saw none, and reports that to `onFallback` (default: one `console.warn` line). A failed check is
 * cached too, so an outage costs one request per gate per `cacheMs`, not one per call. Concurrent
 * checks of one gate share one request. Only the caller's own abort rejects.
 *
 * Code that takes a `GateReleases` can be tested with `TestGateReleases` (./testing.ts): gate
 * states set in memory, the same interface.
 */
import { TallyhoError } from './errors.js';
import type { OperationOptions } from './options.js';
import { throwIfAborted, untilAborted } from './signals.js';
import { segment, type Transport } from './transport.js';
import type { GateView } from './types.js';

export interface IsReleasedOptions extends OperationOptions {
  /** The answer when the gate's state cannot be learned and none was seen before. */
  readonly default: boolean;
}

/** What production code depends on; `client.releases` and `TestGateReleases` both implement it. */
export interface GateReleases {
  isReleased(gate: string, options: IsReleasedOptions): Promise<boolean>;
}

export interface ReleaseFallback {
  readonly gate: string;
  /** What the call answered. */
  readonly answer: boolean;
  /** `lastKnown`: the state seen before the failure; `default`: the caller's default. */
  readonly source: 'lastKnown' | 'default';
  readonly error: unknown;
}

export interface ReleaseCacheOptions {
  /** How long an answer is reused before the gate is read again (default 30 s). */
  readonly cacheMs?: number;
  /** Timeout of one read (default 5 s); the read is not retried, the next check after `cacheMs` is. */
  readonly timeoutMs?: number;
  /** Told every time an answer is not the service's own (default: `console.warn`). */
  readonly onFallback?: (fallback: ReleaseFallback) => void;
}

interface Entry {
  released: boolean | undefined;
  etag: string | undefined;
  checkedAt: number;
  /** The failure of the last check, if it failed: answered from memory until the next one. */
  failure: unknown;
}

const warn = (f: ReleaseFallback): void =>
  console.warn(
    `tallyho: gate ${f.gate} answered ${String(f.answer)} from the ${f.source === 'default' ? 'default' : 'last known state'}:`,
    f.error,
  );

export class CachedGateReleases implements GateReleases {
  private readonly entries = new Map<string, Entry>();
  private readonly checks = new Map<string, Promise<Entry>>();
  private readonly cacheMs: number;
  private readonly timeoutMs: number;
  private readonly onFallback: (fallback: ReleaseFallback) => void;

  constructor(
    private readonly transport: Transport,
    options: ReleaseCacheOptions = {},
  ) {
    this.cacheMs = Math.max(0, options.cacheMs ?? 30_000);
    this.timeoutMs = Math.max(1, options.timeoutMs ?? 5000);
    this.onFallback = options.onFallback ?? warn;
  }

  async isReleased(gate: string, options: IsReleasedOptions): Promise<boolean> {
    throwIfAborted(options.abortSignal);
    let entry = this.entries.get(gate);
    if (entry === undefined || this.transport.clock.now() - entry.checkedAt >= this.cacheMs) {
      entry = await untilAborted(this.check(gate), options.abortSignal);
    }
    if (entry.failure === undefined && entry.released !== undefined) return entry.released;
    const fallback: ReleaseFallback =
      entry.released === undefined
        ? { gate, answer: options.default, source: 'default', error: entry.failure }
        : { gate, answer: entry.released, source: 'lastKnown', error: entry.failure };
    this.onFallback(fallback);
    return fallback.answer;
  }

  /** Forgets cached answers (of one gate, or all), e.g. after the app released a gate itself. */
  invalidate(gate?: string): void {
    if (gate === undefined) this.entries.clear();
    else this.entries.delete(gate);
  }

  /** One read per gate at a time, whoever asks; its outcome (state or failure) is cached. */
  private check(gate: string): Promise<Entry> {
    let check = this.checks.get(gate);
    if (check === undefined) {
      check = this.read(gate).finally(() => this.checks.delete(gate));
      this.checks.set(gate, check);
    }
    return check;
  }

  private async read(gate: string): Promise<Entry> {
    const previous = this.entries.get(gate);
    const entry: Entry = { released: previous?.released, etag: previous?.etag, checkedAt: this.transport.clock.now(), failure: undefined };
    try {
      const answer = await this.transport.json<GateView | undefined>({
        method: 'GET',
        path: `gates/${segment(gate)}`,
        headers: entry.etag === undefined ? {} : { 'if-none-match': entry.etag },
        accept: [304],
        timeoutMs: this.timeoutMs,
        retries: 0,
      });
      if (answer.status !== 304) {
        if (answer.body === undefined) throw new TallyhoError('BadResponse', `GET /gates/${gate} answered ${answer.status} without a gate`);
        entry.released = answer.body.state === 'released';
        entry.etag = answer.headers.get('etag') ?? undefined;
      }
    } catch (err) {
      entry.failure = err;
    }
    this.entries.set(gate, entry);
    return entry;
  }
}
