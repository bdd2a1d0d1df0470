/**
 * Remapping a type from one writer to another without losing or reordering events:
 *
 * 1. The route row gets the new target and version (done by the caller, before anything else), so
 *    fresh resolutions go to the new writer, which answers `notReady` until step 3.
 * 2. The old writer is told to `release` the type: from now on it refuses the type (`notOwner`, the
 *    producer re-resolves), and it flushes everything it accepted so far.
 * 3. Once that is in the log, the old writer signals `adopt` to the new one, handing over the
 *    producers' sequence marks (so a retry of an old event is still recognised as a duplicate).
 *
 * Every event of the type accepted by the old writer is in the log before the new writer accepts
 * its first one, so per-producer order holds across the switch.
 */
import type { AdoptRequest, ProducerMark, Receipt, ReleaseRequest, WriterState } from './writerState';
import { depthOf } from './writerState';

export interface Handoff {
  /** Writer key of the new owner. */
  readonly to: string;
  readonly request: AdoptRequest;
}

function marksOf(state: WriterState, type: string): { mine: Record<string, ProducerMark>; rest: Record<string, ProducerMark> } {
  const mine: Record<string, ProducerMark> = {};
  const rest: Record<string, ProducerMark> = {};
  const prefix = `${type}|`;
  for (const [key, mark] of Object.entries(state.producers)) {
    if (key.startsWith(prefix)) mine[key] = mark;
    else rest[key] = mark;
  }
  return { mine, rest };
}

/** Sends the adopt message for every released type whose events are all in the log now. */
export function completedHandoffs(state: WriterState): { state: WriterState; handoffs: Handoff[] } {
  const handoffs: Handoff[] = [];
  let next = state;
  for (const [type, record] of Object.entries(state.types)) {
    const moved = record.moved;
    if (moved === undefined || moved.adopted || moved.through > next.flushedThrough) continue;
    const { mine, rest } = marksOf(next, type);
    handoffs.push({ to: moved.to, request: { type, version: moved.version, from: '', producers: mine } });
    next = {
      ...next,
      producers: rest,
      types: { ...next.types, [type]: { ...record, moved: { ...moved, adopted: true } } },
      rev: next.rev + 1,
    };
  }
  return { state: next, handoffs };
}

export function release(state: WriterState, request: ReleaseRequest): { state: WriterState; receipt: Receipt; handoffs: Handoff[] } {
  const record = state.types[request.type];
  const receipt: Receipt = { r: request.requestId, ok: true, acc: 0, dup: 0, last: state.nextIndex - 1, kick: depthOf(state) > 0 };
  // Already released at this version or a later one: a repeated remap request changes nothing.
  if (record?.moved !== undefined && record.moved.version >= request.version) return { state, receipt, handoffs: [] };
  if (record !== undefined && record.moved === undefined && record.version >= request.version) return { state, receipt, handoffs: [] };
  const released: WriterState = {
    ...state,
    types: {
      ...state.types,
      [request.type]: {
        version: record?.version ?? 0,
        moved: { version: request.version, to: request.to, through: state.nextIndex, adopted: false },
      },
    },
    flushRequestedThrough: Math.max(state.flushRequestedThrough, state.nextIndex),
    rev: state.rev + 1,
  };
  const { state: next, handoffs } = completedHandoffs(released);
  return { state: next, receipt, handoffs };
}

/** Takes ownership of a type handed over by its previous writer. Older or repeated handoffs are ignored. */
export function adopt(state: WriterState, request: AdoptRequest): WriterState {
  const record = state.types[request.type];
  const newer =
    record === undefined || (request.version > record.version && (record.moved === undefined || request.version > record.moved.version));
  if (!newer) return state;
  const producers: Record<string, ProducerMark> = { ...state.producers };
  for (const [key, mark] of Object.entries(request.producers)) {
    const current = producers[key];
    // index -1: the event is in the previous writer's log already, so `ack=flushed` needs no wait.
    if (current === undefined || mark.seq > current.seq) producers[key] = { seq: mark.seq, index: -1, at: mark.at };
  }
  return { ...state, types: { ...state.types, [request.type]: { version: request.version } }, producers, rev: state.rev + 1 };
}
