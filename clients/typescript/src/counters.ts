/**
 * `increment(key)` with the details hidden: increments of one counter are coalesced as a Kafka
 * producer's records are (./batcher.ts): those made within `lingerMs` of each other, and those made
 * while the requests in flight are out, are added up and sent as one request, so a hot counter costs
 * a request per linger instead of one per increment. Each batch has one Idempotency-Key, reused by
 * its retries, so a batch is counted once even if a response is lost. Every `increment` resolves
 * when the batch holding it is stored (the server's 202), or rejects with that batch's error.
 */
import { Batcher } from './batcher.js';
import { abortReason } from './clock.js';
import { TallyhoError } from './errors.js';
import { newIdempotencyKey } from './ids.js';
import type { OperationOptions } from './options.js';
import { type ListOptions, type PagedAsyncIterableIterator, pagedList } from './paging.js';
import { readFigures } from './figures.js';
import { segment, type Transport } from './transport.js';
import type { CounterFigures, CounterList, CounterSettings, CounterValue, CounterView } from './types.js';

/** The server refuses |by| above this (TALLYHO_COUNTERS_MAX_INCREMENT may be lower). */
export const maxIncrement = 1_000_000_000;

/** TALLYHO_COUNTERS_MAX_INCREMENT's default: a batch summing more would be refused by a server left at it. */
const defaultMaxBatch = 1_000_000;

export interface CounterOptions {
  /** Requests in flight at once per counter (default 4). */
  readonly maxInFlight?: number;
  /**
   * The largest |by| one request may carry: the server's TALLYHO_COUNTERS_MAX_INCREMENT (default
   * 1,000,000, that setting's default; ceiling `maxIncrement`). A batch never sums past it.
   */
  readonly maxBatch?: number;
  /** How long an increment waits for others to share its request, in ms (default 5; 0: the end of the turn). */
  readonly lingerMs?: number;
}

export interface CounterStats {
  readonly increments: number;
  readonly requests: number;
}

export class Counters {
  private readonly lanes = new Map<string, Batcher<number, void>>();
  private readonly maxInFlight: number;
  private readonly maxBatch: number;
  private readonly lingerMs: number;
  private closed = false;
  private increments = 0;
  private requests = 0;

  constructor(
    private readonly transport: Transport,
    options: CounterOptions = {},
  ) {
    this.maxInFlight = Math.max(1, Math.floor(options.maxInFlight ?? 4));
    this.maxBatch = Math.min(maxIncrement, Math.max(1, Math.floor(options.maxBatch ?? defaultMaxBatch)));
    this.lingerMs = Math.max(0, options.lingerMs ?? 5);
  }

  /**
   * Adds `by` (default 1; negative to adjust) to the counter; resolves once it is stored. An abort
   * before its batch is sent withdraws the increment; after, it may still be stored.
   */
  increment(name: string, by = 1, options: OperationOptions = {}): Promise<void> {
    if (this.closed) return Promise.reject(new TallyhoError('Closed', 'The counters client is closed'));
    if (!Number.isSafeInteger(by) || by === 0 || Math.abs(by) > this.maxBatch) {
      return Promise.reject(new RangeError(`by must be a non-zero integer within ±${this.maxBatch}`));
    }
    if (options.abortSignal?.aborted === true) return Promise.reject(abortReason(options.abortSignal));
    this.increments++;
    return this.lane(name).add(by, options.abortSignal);
  }

  /** Sends what is waiting at once and resolves when every increment made so far is stored (or has failed). */
  async flush(): Promise<void> {
    for (;;) {
      const busy = [...this.lanes.values()].filter((lane) => !lane.idle);
      if (busy.length === 0) return;
      for (const lane of busy) lane.flushNow();
      await Promise.all(busy.map((lane) => lane.whenIdle()));
    }
  }

  /** Refuses new increments and drains the ones already made. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  async get(name: string, options: OperationOptions & { consistent?: boolean } = {}): Promise<CounterValue> {
    const answer = await this.transport.json<CounterValue>({
      method: 'GET',
      path: `counters/${segment(name)}`,
      query: { consistent: options.consistent === true ? 'true' : undefined },
      signal: options.abortSignal,
    });
    return answer.body;
  }

  /** Creates the counter or changes its settings (admin). */
  async configure(name: string, settings: CounterSettings = {}, options: OperationOptions = {}): Promise<CounterView> {
    const answer = await this.transport.json<CounterView>({
      method: 'PUT',
      path: `counters/${segment(name)}`,
      body: settings,
      key: 'admin',
      idempotent: true,
      signal: options.abortSignal,
    });
    return answer.body;
  }

  /** Counters with their settings, in name order (read one for its value). */
  list(options: ListOptions = {}): PagedAsyncIterableIterator<CounterView, CounterList> {
    return pagedList(this.transport, { path: 'counters', key: 'admin' }, options);
  }

  /** How far the rollup is behind, read now (admin). */
  figures(options: OperationOptions = {}): Promise<CounterFigures> {
    return readFigures<CounterFigures>(this.transport, 'counters', options.abortSignal);
  }

  /** Increments made and requests sent, to see the coalescing at work. */
  stats(): CounterStats {
    return { increments: this.increments, requests: this.requests };
  }

  private lane(name: string): Batcher<number, void> {
    let lane = this.lanes.get(name);
    if (lane === undefined) {
      const created: Batcher<number, void> = new Batcher<number, void>({
        maxInFlight: this.maxInFlight,
        lingerMs: this.lingerMs,
        sleep: (ms) => this.transport.clock.sleep(ms),
        // Σ|by| bounds |Σby|, so no batch exceeds the server's limit whatever the signs.
        size: Math.abs,
        maxSize: this.maxBatch,
        send: async (increments) => {
          await this.send(name, increments);
          return [];
        },
        onIdle: () => {
          if (this.lanes.get(name) === created) this.lanes.delete(name);
        },
      });
      lane = created;
      this.lanes.set(name, lane);
    }
    return lane;
  }

  private async send(name: string, increments: readonly number[]): Promise<void> {
    const by = increments.reduce((sum, n) => sum + n, 0);
    // Increments that cancel out need no request.
    if (by === 0) return;
    this.requests++;
    await this.transport.json({
      method: 'POST',
      path: `counters/${segment(name)}/increment`,
      body: { by },
      idempotencyKey: newIdempotencyKey(),
    });
  }
}
