/**
 * The event writer: `append` stamps each event with this writer's producer id and the next `seq`,
 * then sends. The server ignores an event whose seq is not above the last one it accepted from the
 * producer, so any retry — by the transport after a lost response, or by the caller — is recognised
 * as a duplicate and never written twice.
 *
 * Appends are coalesced as a Kafka producer's records are (./batcher.ts): those made within
 * `lingerMs` of each other share a request, and up to `maxInFlight` requests are out at once, in
 * call order. Order needs care then: the server accepts a seq gap, so were a later request to land
 * first, the earlier one's events would look like duplicates and be lost. So every request also
 * carries, first, the events of the requests before it that are not yet answered: whichever lands
 * first writes them all in seq order, and the others find duplicates (go-back-N). A request's
 * `accepted` and `duplicates` therefore count those events too. A new request goes only while all
 * that fits in one request, so large batches go one at a time and are never sent twice.
 *
 * Seqs start at the wall clock in microseconds, so a writer restarted with the same producer id
 * continues above everything its previous run sent (unless that run averaged over 1,000 events per
 * millisecond since it started).
 */
import { Batcher } from './batcher.js';
import { abortReason } from './clock.js';
import { TallyhoError } from './errors.js';
import { newIdempotencyKey } from './ids.js';
import type { OperationOptions } from './options.js';
import { segment, type Transport } from './transport.js';
import type { JsonValue, StreamAppendResult, StreamFlushResult, StreamView } from './types.js';

export type Ack = 'buffered' | 'flushed';

export interface StreamOptions {
  /** Who produces the events (1-128 printable ASCII characters). Default: a new random id. */
  readonly producer?: string;
  /** The first seq (default: wall-clock microseconds). */
  readonly firstSeq?: number;
  /**
   * Requests in flight at once (default 4), while what they carry fits in one request (500 events);
   * the events stay in seq order whatever the number.
   */
  readonly maxInFlight?: number;
  /** How long an append waits for others to share its request, in ms (default 5; 0: the end of the turn). */
  readonly lingerMs?: number;
}

export interface AppendOptions extends OperationOptions {
  /** `buffered` (default): in the writer's durable state; `flushed`: in the log blob. */
  readonly ack?: Ack;
  /** When the writer's buffer is full, wait on the server for room instead of retrying on 429. */
  readonly waitForRoom?: boolean;
}

export interface AppendOutcome {
  /** The seqs this call's events were given. */
  readonly seqs: readonly number[];
  /**
   * The answer to the request that carried them; it may cover other calls' events too, and after a
   * retry whose first attempt had landed, it counts them as duplicates.
   */
  readonly request: StreamAppendResult;
}

interface Pending {
  readonly events: { producer: string; seq: number; data: JsonValue }[];
  readonly ack: Ack;
  readonly wait: boolean;
  /** The answer of a request that carried these events and succeeded, with that request's ack. */
  landed?: { readonly answer: StreamAppendResult; readonly ack: Ack };
}

/** Events per request, resent ones included; the server's body limit is what really bounds it. */
const maxEventsPerRequest = 500;

/** Whether an answer with ack `given` also gives `wanted` (flushed implies buffered). */
const covers = (given: Ack, wanted: Ack): boolean => given === 'flushed' || wanted === 'buffered';

export class Stream {
  readonly producer: string;
  private nextSeq: number;
  private readonly batcher: Batcher<Pending, AppendOutcome>;
  /** Appends sent and not yet answered with success, in seq order: what the next request resends first. */
  private unanswered: Pending[] = [];
  private closed = false;

  constructor(
    private readonly transport: Transport,
    readonly type: string,
    options: StreamOptions = {},
  ) {
    this.producer = options.producer ?? `client-${newIdempotencyKey()}`;
    this.nextSeq = options.firstSeq ?? Date.now() * 1000;
    this.batcher = new Batcher<Pending, AppendOutcome>({
      maxInFlight: Math.max(1, Math.floor(options.maxInFlight ?? 4)),
      lingerMs: options.lingerMs ?? 5,
      sleep: (ms) => transport.clock.sleep(ms),
      kind: (p) => `${p.ack}/${String(p.wait)}`,
      size: (p) => p.events.length,
      maxSize: maxEventsPerRequest,
      // A request resends what is out unanswered, so a new one goes only while all of it fits in one
      // request: under light load several are out at once, each small; when batches are large,
      // requests go one at a time, each full, and nothing is sent twice.
      admits: (size) => this.unanswered.reduce((n, p) => n + p.events.length, 0) + size <= maxEventsPerRequest,
      send: (batch) => this.send(batch),
    });
  }

  /**
   * Appends one event's data, or several, in order. An abort before the request carrying them is
   * sent withdraws the events (their seqs are skipped); after, they may still be written.
   */
  append(data: JsonValue | readonly JsonValue[], options: AppendOptions = {}): Promise<AppendOutcome> {
    if (this.closed) return Promise.reject(new TallyhoError('Closed', `stream ${this.type} is closed`));
    const list = Array.isArray(data) ? (data as readonly JsonValue[]) : [data as JsonValue];
    if (list.length === 0) return Promise.reject(new RangeError('append needs at least one event'));
    if (options.abortSignal?.aborted === true) return Promise.reject(abortReason(options.abortSignal));
    const events = list.map((d) => ({ producer: this.producer, seq: this.nextSeq++, data: d }));
    return this.batcher.add({ events, ack: options.ack ?? 'buffered', wait: options.waitForRoom === true }, options.abortSignal);
  }

  /** Sends what is waiting at once and resolves when every append made so far is answered. */
  async flushed(): Promise<void> {
    this.batcher.flushNow();
    await this.batcher.whenIdle();
  }

  /** Refuses new appends and waits for the ones in flight. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flushed();
  }

  /**
   * Where the type goes and how its writer is doing; with `privileged: true` (the admin key) also
   * where its log is and why a flush failed.
   */
  async describe(options: OperationOptions & { privileged?: boolean } = {}): Promise<StreamView> {
    const answer = await this.transport.json<StreamView>({
      method: 'GET',
      path: `streams/${segment(this.type)}${options.privileged === true ? '/privileged' : ''}`,
      ...(options.privileged === true ? { key: 'admin' as const } : {}),
      signal: options.abortSignal,
    });
    return answer.body;
  }

  /** Asks the writer to flush now (admin). */
  async flush(options: OperationOptions = {}): Promise<StreamFlushResult> {
    const answer = await this.transport.json<StreamFlushResult>({
      method: 'POST',
      path: `streams/${segment(this.type)}/flush`,
      key: 'admin',
      idempotent: true,
      signal: options.abortSignal,
    });
    return answer.body;
  }

  private async send(batch: readonly Pending[]): Promise<AppendOutcome[]> {
    const carried = this.unanswered;
    this.unanswered = [...carried, ...batch];
    const outcome = (answer: StreamAppendResult): AppendOutcome[] =>
      batch.map((p) => ({ seqs: p.events.map((e) => e.seq), request: answer }));
    const ack = batch[0]?.ack ?? 'buffered';
    let answer: StreamAppendResult;
    try {
      answer = (
        await this.transport.json<StreamAppendResult>({
          method: 'POST',
          path: `streams/${segment(this.type)}/events`,
          query: { ack, wait: batch[0]?.wait === true ? 'true' : undefined },
          body: { events: [...carried, ...batch].flatMap((p) => p.events) },
          // Producer and seq make the request idempotent: a repeat is answered as duplicates.
          idempotent: true,
          timeoutMs: ack === 'flushed' ? 120_000 : undefined,
        })
      ).body;
    } catch (err) {
      // Its appends are settled now: no later request needs to carry them for their order's sake.
      this.unanswered = this.unanswered.filter((p) => !batch.includes(p));
      // A later request that carried them may have landed them already, with the ack they asked for.
      const landed = batch.map((p) => p.landed);
      if (landed.every((l, i) => l !== undefined && covers(l.ack, (batch[i] as Pending).ack)))
        return batch.map((p, i) => ({ seqs: p.events.map((e) => e.seq), request: (landed[i] as { answer: StreamAppendResult }).answer }));
      throw err;
    }
    // Every event of the request is in the writer's state now (accepted, or accepted before).
    const answered = new Set([...carried, ...batch]);
    for (const p of answered) if (p.landed === undefined || covers(ack, p.landed.ack)) p.landed = { answer, ack };
    this.unanswered = this.unanswered.filter((p) => !answered.has(p));
    return outcome(answer);
  }
}
