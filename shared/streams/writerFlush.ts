/**
 * The flush side of the writer, pure: what the flusher should do next (`plan`), and how the state
 * moves when the log was opened, a batch landed, a batch failed, or a caller asked for a flush.
 *
 * A batch, once taken out of the buffer, stays `inflight` unchanged until the activity confirms it:
 * every retry writes the same bytes at the same append position, which is what makes the append
 * idempotent. Time for the age trigger is the flusher's (durable) clock only, so producers' clocks
 * never decide when a flush happens.
 */
import { firstLineAt, takeLines, utf8Length } from './ndjson';
import { completedHandoffs, type Handoff } from './writerHandoff';
import type { FlushBatch, FlushOutcome, FlushPlan, FlushRequest, LogCursor, Receipt, WriterLimits, WriterState } from './writerState';
import { depthOf, maxBatchLinks } from './writerState';
import { parseWriterKey } from './names';

const maxRetryDelayMs = 60_000;

export interface PlanStep {
  readonly state: WriterState;
  readonly plan: FlushPlan;
}

/** Buffered events that make a flush due: N, or fewer when the buffer cannot even hold N (it is full). */
export function sizeTrigger(limits: WriterLimits): number {
  return Math.min(limits.flushEvents, limits.maxBuffered);
}

/** Whether the buffer must be flushed now: by size (N), by age (T), or because a flush was asked for. */
function isDue(state: WriterState, now: number, dueAt: number): boolean {
  if (state.buffered === 0) return false;
  return state.buffered >= sizeTrigger(state.limits) || now >= dueAt || state.flushRequestedThrough > state.bufferStart;
}

/** Called by the flusher each round with its current (durable) time. */
export function plan(current: WriterState, key: string, now: number): PlanStep {
  // A flusher is planning, so the writer has one again; work since the last idle look ends idleness.
  const active = current.retired === true ? { ...current, retired: false, rev: current.rev + 1 } : current;
  const busy = active.buffered > 0 || active.inflight !== null;
  const state =
    busy && active.idleSince !== undefined && active.idleSince !== null ? { ...active, idleSince: null, rev: active.rev + 1 } : active;
  if (state.cursor === null) return { state, plan: { kind: 'open' } };
  if (state.inflight !== null) {
    const error = state.lastError;
    if (error !== null) {
      const until = error.at + retryDelayMs(error.attempts);
      if (now < until) return { state, plan: { kind: 'backoff', until } };
    }
    return { state, plan: { kind: 'flush', batch: state.inflight } };
  }
  if (state.buffered === 0) {
    const idleSince = state.idleSince ?? now;
    if (now - idleSince >= state.limits.idleRecheckMs && state.flushRequestedThrough <= state.flushedThrough) {
      return { state: { ...state, dueAt: null, idleSince: null, retired: true, rev: state.rev + 1 }, plan: { kind: 'retire' } };
    }
    const next = state.dueAt === null && state.idleSince === idleSince ? state : { ...state, dueAt: null, idleSince, rev: state.rev + 1 };
    return { state: next, plan: { kind: 'idle', until: now + state.limits.idleRecheckMs } };
  }
  const dueAt = state.dueAt ?? now + state.limits.flushIntervalMs;
  if (!isDue(state, now, dueAt)) {
    const next = state.dueAt === dueAt ? state : { ...state, dueAt, rev: state.rev + 1 };
    return { state: next, plan: { kind: 'wait', until: dueAt } };
  }
  const count = Math.min(state.buffered, state.limits.flushMaxEvents);
  const { head, rest } = takeLines(state.buffer, count);
  const headBytes = count === state.buffered ? state.bufferBytes : utf8Length(head);
  const address = parseWriterKey(key);
  let batch: FlushBatch = {
    id: state.nextBatchId,
    partition: address.partition,
    resource: address.resource,
    text: head,
    count,
    bytes: headBytes,
    firstIndex: state.bufferStart,
    cursor: state.cursor,
    maxBlockBytes: state.limits.maxBlockBytes,
    maxBlocksPerBlob: state.limits.maxBlocksPerBlob,
    attempts: 0,
    ...(state.oldestAt === null ? {} : { oldestAt: state.oldestAt }),
  };
  const end = state.bufferStart + count;
  const carried = (state.traces ?? []).filter((mark) => mark.i < end).map((mark) => mark.t);
  if (carried.length > 0) batch = { ...batch, links: [...new Set(carried)].slice(-maxBatchLinks) };
  const remaining = state.buffered - count;
  const next: WriterState = {
    ...state,
    ...(state.traces === undefined ? {} : { traces: state.traces.filter((mark) => mark.i >= end) }),
    buffer: rest,
    buffered: remaining,
    bufferBytes: state.bufferBytes - headBytes,
    bufferStart: state.bufferStart + count,
    // Events left behind by the per-flush cap have waited as long: they stay due.
    dueAt: remaining > 0 ? dueAt : null,
    inflight: batch,
    nextBatchId: state.nextBatchId + 1,
    rev: state.rev + 1,
  };
  return { state: next, plan: { kind: 'flush', batch } };
}

/** 1 s, 2 s, 4 s, … up to a minute between attempts at the same batch. */
function retryDelayMs(attempts: number): number {
  return Math.min(maxRetryDelayMs, 1000 * 2 ** Math.max(0, attempts - 1));
}

export function opened(state: WriterState, cursor: LogCursor): WriterState {
  if (state.cursor !== null) return state;
  return { ...state, cursor, rev: state.rev + 1 };
}

export interface FlushedStep {
  readonly state: WriterState;
  readonly handoffs: readonly Handoff[];
}

/** The batch landed. A stale confirmation (an id that is no longer in flight) changes nothing. */
export function flushed(state: WriterState, outcome: FlushOutcome): FlushedStep {
  const batch = state.inflight;
  if (batch === null || batch.id !== outcome.batchId) return { state, handoffs: [] };
  const through = batch.firstIndex + batch.count;
  const afterFlush: WriterState = {
    ...state,
    inflight: null,
    flushedThrough: through,
    cursor: outcome.cursor,
    oldestAt: state.buffered > 0 ? firstLineAt(state.buffer) : null,
    lastFlush: {
      at: outcome.at,
      events: batch.count,
      bytes: outcome.bytes,
      blob: outcome.blobs[outcome.blobs.length - 1] ?? '',
      blocksFoundWritten: outcome.blocksFoundWritten,
    },
    lastError: null,
    totals: { ...state.totals, flushes: state.totals.flushes + 1, bytes: state.totals.bytes + outcome.bytes },
    rev: state.rev + 1,
  };
  return completedHandoffs(afterFlush);
}

export function flushFailed(state: WriterState, batchId: number, message: string, at: number): WriterState {
  if (state.inflight?.id !== batchId) return state;
  const attempts = (state.lastError?.attempts ?? 0) + 1;
  return {
    ...state,
    inflight: { ...state.inflight, attempts },
    lastError: { at, message: message.slice(0, 500), attempts },
    rev: state.rev + 1,
  };
}

/** Everything accepted so far is to be flushed without waiting for N or T. */
export function requestFlush(state: WriterState, request: FlushRequest): { state: WriterState; receipt: Receipt } {
  const receipt: Receipt = { r: request.requestId, ok: true, acc: 0, dup: 0, last: state.nextIndex - 1, kick: depthOf(state) > 0 };
  if (state.flushRequestedThrough >= state.nextIndex) return { state, receipt };
  return { state: { ...state, flushRequestedThrough: state.nextIndex, rev: state.rev + 1 }, receipt };
}
