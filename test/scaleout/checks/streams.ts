/**
 * Streams across instances (docs/streams.md): one writer at a time per stream — its log's `index`
 * runs 0, 1, 2, … with no gap and no repeat across every blob of the resource, which two writers
 * flushing at once (or one flush written twice) would break; each producer's events are in `seq`
 * order; every event acknowledged with `ack=flushed` is in the log exactly once, and every event
 * acknowledged with `ack=buffered` (durable in the writer, flushed later) is in the log or still in
 * the writer's durable state; no event is in the log twice. Separately: everything acknowledged was
 * flushed by the end of the drain (a stalled flusher shows here, not as a loss).
 */
import { capped, type CheckReport, invariant } from '../workload';

export interface LoggedEvent {
  readonly producer: string;
  readonly seq: number;
  readonly index: number;
}

export interface StreamFacts {
  readonly type: string;
  /** Every line of the resource's log, blobs in name order. */
  readonly log: readonly LoggedEvent[];
  /** `producer/seq` of events the writer held, durably, unflushed once the drain ended. */
  readonly unflushed: ReadonlySet<string>;
  /** `producer/seq` of every acknowledged event, with the ack it got. */
  readonly acknowledged: ReadonlyMap<string, 'flushed' | 'buffered'>;
  /** `producer/seq` of every event sent (acknowledged or not). */
  readonly sent: ReadonlySet<string>;
}

export function checkStreams(streams: readonly StreamFacts[]): CheckReport {
  const writer: string[] = [];
  const order: string[] = [];
  const once: string[] = [];
  const late: string[] = [];
  let events = 0;
  let flushedAcks = 0;
  let bufferedAcks = 0;
  for (const s of streams) {
    events += s.log.length;
    for (const [i, e] of s.log.entries())
      if (e.index !== i) {
        writer.push(`${s.type}: line ${i} of the log has index ${e.index} (two writers, or a flush written twice)`);
        break;
      }
    const last = new Map<string, number>();
    const count = new Map<string, number>();
    for (const e of s.log) {
      const prev = last.get(e.producer);
      if (prev !== undefined && e.seq <= prev) order.push(`${s.type}: producer ${e.producer} seq ${e.seq} is logged after ${prev}`);
      last.set(e.producer, e.seq);
      const k = `${e.producer}/${e.seq}`;
      count.set(k, (count.get(k) ?? 0) + 1);
    }
    for (const [k, n] of count) {
      if (n > 1) once.push(`${s.type}: ${k} is in the log ${n} times`);
      if (!s.sent.has(k)) once.push(`${s.type}: ${k} is in the log but was never sent`);
    }
    for (const [k, ack] of s.acknowledged) {
      if (ack === 'flushed') flushedAcks++;
      else bufferedAcks++;
      if (count.has(k)) continue;
      if (ack === 'buffered' && s.unflushed.has(k)) late.push(`${s.type}: ${k} is still in the writer's buffer after the drain`);
      else once.push(`${s.type}: ${k} was acknowledged (${ack}) but is neither in the log nor in the writer's state`);
    }
    for (const k of s.unflushed) if (count.has(k)) once.push(`${s.type}: ${k} is in the log and still in the writer's buffer`);
  }
  return {
    capability: 'streams',
    invariants: [
      invariant('one writer at a time per stream (the log index never repeats or skips)', capped(writer), {
        streams: streams.length,
        events,
      }),
      invariant('per-producer order holds', capped(order), {}),
      invariant('every acknowledged event is in the log exactly once (buffered ones: or still durable in the writer)', capped(once), {
        flushedAcks,
        bufferedAcks,
      }),
      invariant('everything acknowledged was flushed by the end of the drain', capped(late), { unflushed: late.length }),
    ],
  };
}
