/**
 * `increment(key)` with the details hidden: while a request for a counter is in flight, further
 * increments of that counter are added up and sent as one request when it returns (group commit),
 * so a hot counter costs one request per round trip instead of one per increment. Each batch has
 * one Idempotency-Key, reused by its retries, so a batch is counted once even if a response is lost.
 * Every `increment` resolves when the batch holding it is stored (the server's 202), or rejects with
 * that batch's error.
 */
import { TallyhoError } from './errors.js';
import { newIdempotencyKey } from './ids.js';
import { type ListOptions, type PagedAsyncIterableIterator, pagedList } from './paging.js';
import { readFigures } from './figures.js';
import { segment, type Transport } from './transport.js';
import type { CounterFigures, CounterList, CounterSettings, CounterValue, CounterView } from './types.js';

/** The server refuses |by| above this (TALLYHO_COUNTERS_MAX_INCREMENT may be lower). */
export const maxIncrement = 1_000_000_000;

interface Batch {
  by: number;
  increments: number;
  readonly waiters: { resolve: () => void; reject: (err: unknown) => void }[];
}

interface Lane {
  inFlight: Promise<void> | undefined;
  readonly queued: Batch[];
}

export interface CounterStats {
  readonly increments: number;
  readonly requests: number;
}

export class Counters {
  private readonly lanes = new Map<string, Lane>();
  private closed = false;
  private increments = 0;
  private requests = 0;

  constructor(
    private readonly transport: Transport,
    private readonly maxBatch: number = maxIncrement,
  ) {}

  /** Adds `by` (default 1; negative to adjust) to the counter; resolves once it is stored. */
  increment(name: string, by = 1): Promise<void> {
    if (this.closed) return Promise.reject(new TallyhoError('Closed', 'The counters client is closed'));
    if (!Number.isSafeInteger(by) || by === 0 || Math.abs(by) > this.maxBatch) {
      return Promise.reject(new RangeError(`by must be a non-zero integer within ±${this.maxBatch}`));
    }
    this.increments++;
    const lane = this.lane(name);
    return new Promise<void>((resolve, reject) => {
      let batch = lane.queued.at(-1);
      if (batch === undefined || Math.abs(batch.by + by) > this.maxBatch) {
        batch = { by: 0, increments: 0, waiters: [] };
        lane.queued.push(batch);
      }
      batch.by += by;
      batch.increments++;
      batch.waiters.push({ resolve, reject });
      if (lane.inFlight === undefined) this.pump(name, lane);
    });
  }

  /** Resolves when every increment made so far is stored (or has failed). */
  async flush(): Promise<void> {
    for (;;) {
      const pending = [...this.lanes.values()].flatMap((l) => (l.inFlight === undefined ? [] : [l.inFlight]));
      if (pending.length === 0) return;
      await Promise.all(pending);
    }
  }

  /** Refuses new increments and drains the ones already made. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  async get(name: string, options: { consistent?: boolean; signal?: AbortSignal } = {}): Promise<CounterValue> {
    const answer = await this.transport.json<CounterValue>({
      method: 'GET',
      path: `counters/${segment(name)}`,
      query: { consistent: options.consistent === true ? 'true' : undefined },
      signal: options.signal,
    });
    return answer.body;
  }

  /** Creates the counter or changes its settings (admin). */
  async configure(name: string, settings: CounterSettings = {}, options: { signal?: AbortSignal } = {}): Promise<CounterView> {
    const answer = await this.transport.json<CounterView>({
      method: 'PUT',
      path: `counters/${segment(name)}`,
      body: settings,
      key: 'admin',
      idempotent: true,
      signal: options.signal,
    });
    return answer.body;
  }

  /** Counters with their settings, in name order (read one for its value). */
  list(options: ListOptions = {}): PagedAsyncIterableIterator<CounterView, CounterList> {
    return pagedList(this.transport, { path: 'counters', key: 'admin' }, options);
  }

  /** How far the rollup is behind, read now (admin). */
  figures(options: { signal?: AbortSignal } = {}): Promise<CounterFigures> {
    return readFigures<CounterFigures>(this.transport, 'counters', options.signal);
  }

  /** Increments made and requests sent, to see the coalescing at work. */
  stats(): CounterStats {
    return { increments: this.increments, requests: this.requests };
  }

  private lane(name: string): Lane {
    let lane = this.lanes.get(name);
    if (lane === undefined) {
      lane = { inFlight: undefined, queued: [] };
      this.lanes.set(name, lane);
    }
    return lane;
  }

  /** Sends queued batches one at a time; increments made meanwhile join the next batch. */
  private pump(name: string, lane: Lane): void {
    lane.inFlight = (async () => {
      for (let batch = lane.queued.shift(); batch !== undefined; batch = lane.queued.shift()) {
        await this.send(name, batch);
      }
      lane.inFlight = undefined;
      this.lanes.delete(name);
    })();
  }

  private async send(name: string, batch: Batch): Promise<void> {
    try {
      if (batch.by !== 0) {
        this.requests++;
        await this.transport.json({
          method: 'POST',
          path: `counters/${segment(name)}/increment`,
          body: { by: batch.by },
          idempotencyKey: newIdempotencyKey(),
        });
      }
      for (const w of batch.waiters) w.resolve();
    } catch (err) {
      for (const w of batch.waiters) w.reject(err);
    }
  }
}
