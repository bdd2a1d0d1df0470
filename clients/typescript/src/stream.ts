/**
 * The event writer: `append` stamps each event with this writer's producer id and the next `seq`,
 * then sends. The server ignores an event whose seq is not above the last one it accepted from the
 * producer, so any retry — by the transport after a lost response, or by the caller — is recognised
 * as a duplicate and never written twice.
 *
 * Appends of one writer go out one request at a time, in call order: were two in flight, the later
 * seq could arrive first and make the earlier one look like a duplicate. Appends made while a
 * request is in flight are sent together in the next request (./batcher.ts; each keeps its own
 * result promise).
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
}

/** Events per request; the server's body limit is what really bounds it. */
const maxEventsPerRequest = 500;

export class Stream {
  readonly producer: string;
  private nextSeq: number;
  private readonly batcher: Batcher<Pending, AppendOutcome>;
  private closed = false;

  constructor(
    private readonly transport: Transport,
    readonly type: string,
    options: StreamOptions = {},
  ) {
    this.producer = options.producer ?? `client-${newIdempotencyKey()}`;
    this.nextSeq = options.firstSeq ?? Date.now() * 1000;
    this.batcher = new Batcher<Pending, AppendOutcome>({
      maxInFlight: 1,
      kind: (p) => `${p.ack}/${String(p.wait)}`,
      size: (p) => p.events.length,
      maxSize: maxEventsPerRequest,
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

  /** Resolves when every append made so far is answered. */
  async flushed(): Promise<void> {
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
    const events = batch.flatMap((p) => p.events);
    const answer = await this.transport.json<StreamAppendResult>({
      method: 'POST',
      path: `streams/${segment(this.type)}/events`,
      query: { ack: batch[0]?.ack, wait: batch[0]?.wait === true ? 'true' : undefined },
      body: { events },
      // Producer and seq make the request idempotent: a repeat is answered as duplicates.
      idempotent: true,
      timeoutMs: batch[0]?.ack === 'flushed' ? 120_000 : undefined,
    });
    return batch.map((p) => ({ seqs: p.events.map((e) => e.seq), request: answer.body }));
  }
}
