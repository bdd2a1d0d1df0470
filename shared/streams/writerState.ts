/**
 * The durable state of one stream writer and the messages it exchanges. Everything here is plain
 * JSON: the entity stores it, the flusher passes parts of it to activities, the ledger mirrors a
 * snapshot of it.
 *
 * The buffer is kept as NDJSON text rather than an array of objects: durable-functions parses and
 * re-serialises the whole state on every operation, and a single string costs a fraction of a tree
 * of small objects to do that with. The flush writes the same text to the blob unchanged.
 */

/** Settings the writer acts on. They travel with every append (entities cannot read settings). */
export interface WriterLimits {
  /** Flush once this many events are buffered (N). */
  readonly flushEvents: number;
  /** Flush once the buffer has waited this long on the flusher's clock (T). */
  readonly flushIntervalMs: number;
  /** Events one flush takes at most; the rest go in the next flush. */
  readonly flushMaxEvents: number;
  /** Buffered plus in-flight events at most; beyond it appends are refused (back-pressure). */
  readonly maxBuffered: number;
  /**
   * UTF-8 bytes of unflushed NDJSON at most. Bounds the entity's state (and the flush batch, which
   * travels through the flusher's history), whatever the size of the events.
   */
  readonly maxBufferedBytes: number;
  /** Producers whose last sequence number is remembered at most; past it, new producers are refused. */
  readonly maxProducers: number;
  /**
   * Of those, the marks one caller may hold (its producers' marks carry its tag): one client app
   * cannot take the whole pool. Absent in messages sent before there was a quota.
   */
  readonly maxProducersPerCaller?: number;
  /**
   * How long a producer's mark is kept after its last accepted event, whatever other producers do:
   * a retry within this window is always recognised as a duplicate. Only older marks make room.
   */
  readonly dedupWindowMs: number;
  /** Largest append block. */
  readonly maxBlockBytes: number;
  /** Blocks per blob before the log rolls to the next blob (Azure allows 50,000). */
  readonly maxBlocksPerBlob: number;
  /** How often an idle flusher looks at the writer even without a wake-up (covers a lost kick). */
  readonly idleRecheckMs: number;
}

/** Where the next append goes: blob number within the writer's log, byte length, committed blocks. */
export interface LogCursor {
  readonly blob: number;
  readonly position: number;
  readonly blocks: number;
}

/** A batch taken out of the buffer and being written. Retried unchanged until it is confirmed. */
export interface FlushBatch {
  readonly id: number;
  readonly partition: string;
  readonly resource: string;
  readonly text: string;
  readonly count: number;
  /** UTF-8 bytes of `text`. */
  readonly bytes: number;
  readonly firstIndex: number;
  readonly cursor: LogCursor;
  /** Fixed when the batch is taken, so a retry splits it into exactly the same blocks. */
  readonly maxBlockBytes: number;
  readonly maxBlocksPerBlob: number;
  readonly attempts: number;
  /** Client time its oldest event was accepted (the flush-lag metric); absent in batches taken before it was kept. */
  readonly oldestAt?: number;
  /** The traceparents of the appends whose events it holds (at most maxBatchLinks): the flush span links them. */
  readonly links?: readonly string[];
  /**
   * The entity batch (its invocation id) that took it: the flusher is handed it only by a later
   * batch, once it is stored (writerCheckpoint.ts). Absent in batches taken before that rule.
   */
  readonly takenIn?: string;
}

/** An append's trace context, kept with the index of its first event until that event is flushed. */
export interface TraceMark {
  readonly i: number;
  readonly t: string;
}

/** Trace marks a writer keeps (the newest), and links one batch carries: bounded whatever the traffic. */
export const maxTraceMarks = 64;
export const maxBatchLinks = 32;

/** What a completed append reports back (the activity's result). */
export interface FlushOutcome {
  readonly batchId: number;
  readonly cursor: LogCursor;
  readonly bytes: number;
  readonly blocks: number;
  /** Blocks that had already landed (an earlier attempt whose response was lost). */
  readonly blocksFoundWritten: number;
  readonly blobs: readonly string[];
  readonly at: number;
}

export interface ProducerMark {
  /** Highest sequence number accepted. */
  readonly seq: number;
  /** Writer index of that event. */
  readonly index: number;
  /** Client time it was accepted: the mark is kept for the dedup window after it. */
  readonly at: number;
  /** The caller whose request made the mark (its Caller id, shared/identity/caller.ts); absent for the app's own. */
  readonly c?: string;
}

/**
 * Ownership of one event type: the route version this writer owns (or owned), whether it holds the
 * type's history (`ready`: route version 0, or the previous writer's handoff arrived), and `moved`
 * once the type was released to another writer.
 */
export interface TypeRecord {
  readonly version: number;
  readonly ready: boolean;
  /** Only the app appends to this type (it said so with `own`): its producers take no place under the callers' cap. */
  readonly own?: true;
  readonly moved?: {
    readonly version: number;
    readonly to: string;
    /** The handoff happens once every event with index < through is in the log. */
    readonly through: number;
    readonly adopted: boolean;
  };
}

export interface FlushRecord {
  readonly at: number;
  readonly events: number;
  readonly bytes: number;
  readonly blob: string;
  readonly blocksFoundWritten: number;
}

export interface WriterTotals {
  readonly accepted: number;
  readonly duplicates: number;
  readonly refusedFull: number;
  readonly flushes: number;
  readonly bytes: number;
}

export interface WriterState {
  readonly v: 1;
  readonly limits: WriterLimits;
  /** The index the next accepted event gets (events are numbered 0, 1, 2, … per writer). */
  readonly nextIndex: number;
  /** NDJSON lines accepted and not yet taken by a flush, in index order. */
  readonly buffer: string;
  readonly buffered: number;
  /** UTF-8 bytes of `buffer`. */
  readonly bufferBytes: number;
  readonly bufferStart: number;
  /** Client time of the oldest event not yet in the log (buffer or in flight). */
  readonly oldestAt: number | null;
  /** Flusher-clock time the buffer becomes due by age; set when the flusher first sees it non-empty. */
  readonly dueAt: number | null;
  readonly inflight: FlushBatch | null;
  readonly nextBatchId: number;
  /** Every event with index < flushedThrough is in the log. */
  readonly flushedThrough: number;
  /** Events with index < this must be flushed without waiting for N or T (explicit flush, remap). */
  readonly flushRequestedThrough: number;
  /** Null until the flusher opened the log (picked a blob after any already there). */
  readonly cursor: LogCursor | null;
  readonly types: Readonly<Record<string, TypeRecord>>;
  /** Dedup marks per `type|producer`. */
  readonly producers: Readonly<Record<string, ProducerMark>>;
  readonly lastFlush: FlushRecord | null;
  readonly lastError: { readonly at: number; readonly message: string; readonly attempts: number } | null;
  readonly totals: WriterTotals;
  /** Bumped on every change, so the ledger can ignore an out-of-date snapshot. */
  readonly rev: number;
  /** Flusher-clock time the writer was first seen with nothing to flush (null: it has work). */
  readonly idleSince?: number | null;
  /**
   * The flusher ended after a full idle round (an idle writer costs nothing): every append answers
   * `restart` until a flusher plans again, so the appender starts a new one.
   */
  readonly retired?: boolean;
  /** The trace context of recent appends with unflushed events (at most maxTraceMarks), oldest first. */
  readonly traces?: readonly TraceMark[];
  /**
   * Receipts not told to the ledger yet, each with the entity batch (invocation id) that made it:
   * a receipt is told only by a later batch, once the state it describes is stored (writerCheckpoint.ts).
   */
  readonly held?: readonly HeldReceipt[];
}

/** A receipt waiting for the state that made it to be stored. */
export interface HeldReceipt {
  /** The entity batch that made it. */
  readonly b: string;
  readonly receipt: Receipt;
}

interface EventInput {
  readonly producer: string;
  readonly seq: number;
  readonly data?: unknown;
}

export interface AppendRequest {
  readonly requestId: string;
  readonly type: string;
  /** Route version the caller resolved; the writer refuses versions it does not own. */
  readonly version: number;
  /** Caller's clock, ms. */
  readonly at: number;
  readonly limits: WriterLimits;
  readonly events: readonly EventInput[];
  /** The app appends to its own type (an in-app processor's stream); callers are refused on such types. */
  readonly own?: true;
  /** Who sent it (its Caller id, shared/identity/caller.ts), for the per-caller producer quota; absent for the app itself. */
  readonly caller?: string;
  /** The W3C traceparent of the append's span: its events' flush links it. */
  readonly tp?: string;
}

/**
 * The append operation's input: one or more requests, each answered by its own receipt. An instance
 * merges the requests that arrive while its previous signal to the writer is still being sent
 * (group commit), so concurrent producers share one message and one entity step.
 */
export interface AppendOperation {
  readonly requests: readonly AppendRequest[];
}

/**
 * `producers`: the writer remembers maxProducers producers, all active within the dedup window;
 * `callerProducers`: the caller already holds its quota of them.
 */
export type Refusal = 'full' | 'notOwner' | 'notReady' | 'producers' | 'callerProducers';

export type Receipt =
  | {
      readonly r: string;
      readonly ok: true;
      /** Events newly accepted / ignored as already accepted. */
      readonly acc: number;
      readonly dup: number;
      /** Highest writer index the request covers (-1: none), what `ack=flushed` waits for. */
      readonly last: number;
      /** The flusher should be woken (buffer became non-empty, reached N, or a flush was asked for). */
      readonly kick: boolean;
      /** The flusher retired while idle: start a new one (once the old one has ended). */
      readonly restart?: true;
    }
  | { readonly r: string; readonly ok: false; readonly why: Refusal };

export interface FlushRequest {
  readonly requestId: string;
}

export interface ReleaseRequest {
  readonly requestId: string;
  readonly type: string;
  /** The new route version, owned by `to`. */
  readonly version: number;
  /** Writer key of the new owner. */
  readonly to: string;
}

export interface AdoptRequest {
  readonly type: string;
  readonly version: number;
  readonly from: string;
  readonly producers: Readonly<Record<string, ProducerMark>>;
}

export type FlushPlan =
  | { readonly kind: 'open' }
  | { readonly kind: 'flush'; readonly batch: FlushBatch }
  | { readonly kind: 'wait'; readonly until: number }
  | { readonly kind: 'idle'; readonly until: number }
  /** Idle for a whole recheck interval: the flusher ends; the next append starts a new one. */
  | { readonly kind: 'retire' }
  /** The last attempt failed: wait until `until` before retrying the same batch. */
  | { readonly kind: 'backoff'; readonly until: number }
  /** A batch was taken in this step: plan again, and the next step (once this one is stored) hands it out. */
  | { readonly kind: 'taken' };

/** Defaults for a writer that has not seen an append yet (a flush or remap can reach it first). */
export const fallbackLimits: WriterLimits = {
  flushEvents: 100,
  flushIntervalMs: 1000,
  flushMaxEvents: 5000,
  maxBuffered: 5000,
  maxBufferedBytes: 256 * 1024,
  maxProducers: 1000,
  dedupWindowMs: 15 * 60_000,
  maxBlockBytes: 4 * 1024 * 1024,
  maxBlocksPerBlob: 50_000,
  idleRecheckMs: 60_000,
};

export function initialWriterState(limits: WriterLimits = fallbackLimits): WriterState {
  return {
    v: 1,
    limits,
    nextIndex: 0,
    buffer: '',
    buffered: 0,
    bufferBytes: 0,
    bufferStart: 0,
    oldestAt: null,
    dueAt: null,
    inflight: null,
    nextBatchId: 1,
    flushedThrough: 0,
    flushRequestedThrough: 0,
    cursor: null,
    types: {},
    producers: {},
    lastFlush: null,
    lastError: null,
    totals: { accepted: 0, duplicates: 0, refusedFull: 0, flushes: 0, bytes: 0 },
    rev: 0,
  };
}

/** Unflushed events: buffered plus in flight. What back-pressure bounds. */
export function depthOf(state: WriterState): number {
  return state.buffered + (state.inflight?.count ?? 0);
}

/** UTF-8 bytes of the unflushed events. */
export function depthBytesOf(state: WriterState): number {
  return state.bufferBytes + (state.inflight?.bytes ?? 0);
}
