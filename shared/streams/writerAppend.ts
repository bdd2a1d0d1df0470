/**
 * The writer's append operation, as a pure function of (state, request). Deterministic: the entity
 * replays nothing, but one writer must decide exactly once and the same way for every request, and
 * the lint override on `*.entity.ts` keeps clocks, randomness and I/O out.
 */
import { exceedsShare } from '../shares';
import { formatLine, utf8Length } from './ndjson';
import { sizeTrigger } from './writerFlush';
import {
  type AppendRequest,
  depthBytesOf,
  depthOf,
  maxTraceMarks,
  type ProducerMark,
  type Receipt,
  type Refusal,
  type TraceMark,
  type TypeRecord,
  type WriterState,
} from './writerState';

export interface AppendStep {
  readonly state: WriterState;
  readonly receipt: Receipt;
}

/**
 * `type|producer` and, for a caller's producer, ` caller` after it: event types are validated names
 * without `|`, so the first `|` splits it, and producer ids hold no space. A producer id belongs to
 * the caller that used it (docs/security.md "Ownership"): another caller naming the same id is a
 * producer of its own, so it can neither have its events taken as duplicates of the owner's nor
 * make the owner's next events look like duplicates.
 */
function producerKey(type: string, producer: string, caller: string | undefined): string {
  return caller === undefined ? `${type}|${producer}` : `${type}|${producer} ${caller}`;
}

/**
 * Whether this writer takes events of a type at the route version the caller resolved:
 * `notOwner` when the caller's route is older than what the writer knows (re-resolve), `notReady`
 * when it is newer (a remap towards this writer whose handoff has not arrived yet).
 */
export function ownership(record: TypeRecord | undefined, version: number): 'ok' | 'notOwner' | 'notReady' {
  if (record === undefined) return version === 0 ? 'ok' : 'notReady';
  if (record.moved !== undefined) return version > record.moved.version ? 'notReady' : 'notOwner';
  if (version < record.version) return 'notOwner';
  return version === record.version && record.ready ? 'ok' : 'notReady';
}

/**
 * Makes room among the producer marks when there are more than `max`: only marks older than the
 * dedup window (`at < cutoff`) whose event is in the log may go, so no caller can flush another's
 * dedup state faster than the documented window by sending from many producers. Returns the marks
 * kept; more than `max` of them means every mark is still protected and the newcomer is refused.
 */
/** The app's own types (see `TypeRecord.own`): their producers are not callers'. */
function ownTypes(types: WriterState['types']): Set<string> {
  return new Set(Object.entries(types).flatMap(([type, record]) => (record.own === true ? [type] : [])));
}

/** Marks of callers' producers: what TALLYHO_STREAMS_MAX_PRODUCERS bounds. */
function callerMarks(marks: Readonly<Record<string, ProducerMark>>, own: ReadonlySet<string>): number {
  if (own.size === 0) return Object.keys(marks).length;
  return Object.keys(marks).filter((key) => !own.has(key.slice(0, key.indexOf('|')))).length;
}

/**
 * The app's own producers (one per job delivery, say) are not under the callers' cap; their marks
 * are dropped once past the dedup window and in the log, however many there are, so they stay bounded
 * by the app's own rate.
 */
function pruneOwn(marks: Record<string, ProducerMark>, type: string, flushedThrough: number, cutoff: number): Record<string, ProducerMark> {
  const prefix = `${type}|`;
  const kept: Record<string, ProducerMark> = {};
  for (const [key, mark] of Object.entries(marks)) {
    if (key.startsWith(prefix) && mark.at < cutoff && mark.index < flushedThrough) continue;
    kept[key] = mark;
  }
  return kept;
}

function evictProducers(
  marks: Record<string, ProducerMark>,
  max: number,
  flushedThrough: number,
  cutoff: number,
  own: ReadonlySet<string>,
): Record<string, ProducerMark> {
  const keys = Object.keys(marks);
  if (callerMarks(marks, own) <= max) return marks;
  const kept: Record<string, ProducerMark> = {};
  for (const key of keys) {
    const mark = marks[key];
    if (mark !== undefined && (mark.at >= cutoff || mark.index >= flushedThrough)) kept[key] = mark;
  }
  return kept;
}

/**
 * Whether `caller` holds more protected marks than its quota: marks within the dedup window or not
 * in the log yet, the ones `evictProducers` may not drop (older ones are the pool's to reuse). The
 * app itself, and callers without a key, have no quota.
 */
function overQuota(marks: Record<string, ProducerMark>, request: AppendRequest, flushedThrough: number): boolean {
  const { caller, limits } = request;
  const quota = limits.maxProducersPerCaller;
  if (caller === undefined || quota === undefined) return false;
  const cutoff = request.at - limits.dedupWindowMs;
  let held = 0;
  for (const key in marks) {
    const mark = marks[key];
    // The fair-share rule every pool applies (shared/shares.ts), on the marks as they would be.
    if (mark?.c === caller && (mark.at >= cutoff || mark.index >= flushedThrough) && exceedsShare(++held, quota)) return true;
  }
  return false;
}

function refuse(state: WriterState, requestId: string, why: Refusal): AppendStep {
  if (why !== 'full') return { state, receipt: { r: requestId, ok: false, why } };
  const totals = { ...state.totals, refusedFull: state.totals.refusedFull + 1 };
  return { state: { ...state, totals, rev: state.rev + 1 }, receipt: { r: requestId, ok: false, why } };
}

/** The marks with one more, the newest maxTraceMarks kept. */
function withTrace(marks: readonly TraceMark[] | undefined, mark: TraceMark): TraceMark[] {
  const all = [...(marks ?? []), mark];
  return all.length > maxTraceMarks ? all.slice(all.length - maxTraceMarks) : all;
}

/**
 * Accepts the request's new events (all or none), ignores the ones already accepted (a retry), or
 * refuses the request. Within one producer, events are accepted in sequence order only: an event
 * whose `seq` is not above the producer's mark is a duplicate.
 */
export function append(state: WriterState, request: AppendRequest): AppendStep {
  const verdict = ownership(state.types[request.type], request.version);
  if (verdict !== 'ok') return refuse(state, request.requestId, verdict);

  const marks: Record<string, ProducerMark> = { ...state.producers };
  const iso = new Date(request.at).toISOString();
  let index = state.nextIndex;
  let lines = '';
  let fresh = 0;
  let duplicates = 0;
  let last = -1;
  for (const event of request.events) {
    const key = producerKey(request.type, event.producer, request.caller);
    const mark = marks[key];
    if (mark !== undefined && event.seq <= mark.seq) {
      duplicates++;
      last = Math.max(last, mark.index);
      continue;
    }
    lines += formatLine({ type: request.type, producer: event.producer, seq: event.seq, index, at: iso, data: event.data });
    marks[key] = { seq: event.seq, index, at: request.at, ...(request.caller === undefined ? {} : { c: request.caller }) };
    last = Math.max(last, index);
    index++;
    fresh++;
  }

  const limits = request.limits;
  const depth = depthOf(state);
  const bytes = utf8Length(lines);
  if (fresh > 0 && (depth + fresh > limits.maxBuffered || depthBytesOf(state) + bytes > limits.maxBufferedBytes)) {
    return refuse(state, request.requestId, 'full');
  }

  // Only a request that brings new producers can be refused for them: known producers always go on.
  // The app's own producers are never refused and never count against the callers' cap.
  const own = ownTypes(state.types);
  if (request.own === true) own.add(request.type);
  const cutoff = request.at - limits.dedupWindowMs;
  const newcomers = request.own !== true && callerMarks(marks, own) > callerMarks(state.producers, own);
  const producers =
    request.own === true && fresh > 0
      ? pruneOwn(marks, request.type, state.flushedThrough, cutoff)
      : newcomers
        ? evictProducers(marks, limits.maxProducers, state.flushedThrough, cutoff, own)
        : fresh > 0
          ? marks
          : state.producers;
  if (newcomers && callerMarks(producers, own) > limits.maxProducers) return refuse(state, request.requestId, 'producers');
  if (newcomers && overQuota(producers, request, state.flushedThrough)) return refuse(state, request.requestId, 'callerProducers');

  const buffered = state.buffered + fresh;
  const trigger = sizeTrigger(limits);
  const kick = fresh > 0 && (depth === 0 || (state.buffered < trigger && buffered >= trigger));
  const known = state.types[request.type];
  const types =
    known === undefined
      ? { ...state.types, [request.type]: { version: 0, ready: true, ...(request.own === true ? { own: true as const } : {}) } }
      : request.own === true && known.own !== true
        ? { ...state.types, [request.type]: { ...known, own: true as const } }
        : state.types;
  const traces = fresh > 0 && request.tp !== undefined ? withTrace(state.traces, { i: state.nextIndex, t: request.tp }) : state.traces;
  const next: WriterState = {
    ...state,
    ...(traces === undefined ? {} : { traces }),
    limits,
    types,
    nextIndex: index,
    buffer: state.buffer + lines,
    buffered,
    bufferBytes: state.bufferBytes + bytes,
    oldestAt: state.oldestAt ?? (fresh > 0 ? request.at : null),
    producers,
    totals: { ...state.totals, accepted: state.totals.accepted + fresh, duplicates: state.totals.duplicates + duplicates },
    rev: state.rev + 1,
  };
  const receipt = { r: request.requestId, ok: true, acc: fresh, dup: duplicates, last, kick } as const;
  return { state: next, receipt: state.retired === true && fresh > 0 ? { ...receipt, kick: true, restart: true } : receipt };
}
