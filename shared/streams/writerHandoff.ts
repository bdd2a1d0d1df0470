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
    // Not ready: this writer's own handoff has not arrived yet; passing on now would skip it.
    if (moved === undefined || moved.adopted || !record.ready || moved.through > next.flushedThrough) continue;
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

/**
 * Releases a type to the writer of route version `request.version`. This writer owned the version
 * before it; if that ownership itself came by a handoff that has not arrived yet (two remaps in quick
 * succession), the release waits for it, so history is passed on in order and never skipped.
 */
export function release(state: WriterState, request: ReleaseRequest): { state: WriterState; receipt: Receipt; handoffs: Handoff[] } {
  const record = state.types[request.type];
  const receipt: Receipt = { r: request.requestId, ok: true, acc: 0, dup: 0, last: state.nextIndex - 1, kick: depthOf(state) > 0 };
  const owned = request.version - 1;
  // Already released at this version or a later one, or owning a later one: nothing to do again.
  if (record?.moved !== undefined && record.moved.version >= request.version) return { state, receipt, handoffs: [] };
  if (record !== undefined && record.moved === undefined && record.version >= request.version) return { state, receipt, handoffs: [] };
  const ready =
    owned === 0 ? record === undefined || record.ready : record?.moved === undefined && record?.version === owned && record.ready;
  const released: WriterState = {
    ...state,
    types: {
      ...state.types,
      [request.type]: {
        version: owned,
        ready,
        moved: { version: request.version, to: request.to, through: state.nextIndex, adopted: false },
      },
    },
    flushRequestedThrough: Math.max(state.flushRequestedThrough, state.nextIndex),
    rev: state.rev + 1,
  };
  const { state: next, handoffs } = completedHandoffs(released);
  return { state: next, receipt, handoffs };
}

function mergeMarks(
  current: Readonly<Record<string, ProducerMark>>,
  handed: Readonly<Record<string, ProducerMark>>,
): Record<string, ProducerMark> {
  const producers: Record<string, ProducerMark> = { ...current };
  for (const [key, mark] of Object.entries(handed)) {
    const mine = producers[key];
    // index -1: the event is in the previous writer's log already, so `ack=flushed` needs no wait.
    if (mine === undefined || mark.seq > mine.seq) producers[key] = { seq: mark.seq, index: -1, at: mark.at };
  }
  return producers;
}

/** Takes ownership of a type handed over by its previous writer. Older or repeated handoffs are ignored. */
export function adopt(state: WriterState, request: AdoptRequest): { state: WriterState; handoffs: Handoff[] } {
  const record = state.types[request.type];
  const producers = mergeMarks(state.producers, request.producers);
  // Released before this handoff arrived: now it can be passed on (once flushed).
  if (record?.moved !== undefined && !record.ready && request.version === record.version) {
    const types = { ...state.types, [request.type]: { ...record, ready: true } };
    return completedHandoffs({ ...state, types, producers, rev: state.rev + 1 });
  }
  const newer =
    record === undefined || (request.version > record.version && (record.moved === undefined || request.version > record.moved.version));
  if (!newer) return { state, handoffs: [] };
  const types = { ...state.types, [request.type]: { version: request.version, ready: true } };
  return { state: { ...state, types, producers, rev: state.rev + 1 }, handoffs: [] };
}
