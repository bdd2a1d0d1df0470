/**
 * Trace context through a writer (shared/streams/writerAppend.ts, writerFlush.ts): an append's
 * traceparent stays with its first event while that event is buffered, the batch that takes it
 * carries it for the flush span's links, and the buffer's depth once the batch is written comes with it.
 */
import { append } from '../../../shared/streams/writerAppend';
import { flushed, plan } from '../../../shared/streams/writerFlush';
import { maxBatchLinks, maxTraceMarks, type FlushBatch, type WriterState } from '../../../shared/streams/writerState';
import { limits, opened0, request } from './fixtures';

const key = 'p00:default';
const tp = (n: number): string => `00-${n.toString(16).padStart(32, '0')}-${n.toString(16).padStart(16, '0')}-01`;

function batchOf(state: WriterState, now: number): { state: WriterState; batch: FlushBatch } {
  const step = plan(state, key, now);
  if (step.plan.kind !== 'flush') throw new Error(`expected a flush, got ${step.plan.kind}`);
  return { state: step.state, batch: step.plan.batch };
}

describe('trace marks', () => {
  it('the batch carries the traceparents of the appends whose events it takes, and what it leaves buffered', () => {
    // The request's limits are the writer's (each append brings the settings it was sent with).
    const capped = { ...limits, flushMaxEvents: 3 };
    let state = opened0(capped);
    state = append(
      state,
      request(
        [
          { producer: 'a', seq: 1 },
          { producer: 'a', seq: 2 },
        ],
        { tp: tp(1), limits: capped },
      ),
    ).state;
    state = append(state, request([{ producer: 'b', seq: 1 }], { tp: tp(2), limits: capped })).state;
    state = append(state, request([{ producer: 'c', seq: 1 }], { tp: tp(3), limits: capped })).state;
    // A retry adds no event, so no mark.
    state = append(state, request([{ producer: 'a', seq: 2 }], { tp: tp(4), limits: capped })).state;
    expect(state.traces?.map((m) => m.t)).toEqual([tp(1), tp(2), tp(3)]);
    const first = batchOf(state, Date.now() + 60_000);
    expect(first.batch.links).toEqual([tp(1), tp(2)]);
    expect(first.state.buffered).toBe(1);
    expect(first.state.traces?.map((m) => m.t)).toEqual([tp(3)]);
    const done = flushed(first.state, {
      batchId: first.batch.id,
      cursor: first.batch.cursor,
      bytes: 1,
      blocks: 1,
      blocksFoundWritten: 0,
      blobs: [],
      at: 0,
    });
    const second = batchOf(done.state, Date.now() + 120_000);
    expect(second.batch.links).toEqual([tp(3)]);
    expect(second.state.buffered).toBe(0);
    expect(second.state.traces).toEqual([]);
  });

  it('keeps at most maxTraceMarks marks and a batch at most maxBatchLinks links, the newest', () => {
    const roomy = { ...limits, maxBuffered: 1000, flushEvents: 50, flushMaxEvents: 1000 };
    let state = opened0(roomy);
    for (let n = 1; n <= maxTraceMarks + 10; n++)
      state = append(state, request([{ producer: `p${n}`, seq: 1 }], { tp: tp(n), limits: roomy })).state;
    expect(state.traces).toHaveLength(maxTraceMarks);
    expect(state.traces?.at(-1)?.t).toBe(tp(maxTraceMarks + 10));
    const { batch } = batchOf(state, Date.now() + 60_000);
    expect(batch.links).toHaveLength(maxBatchLinks);
    expect(batch.links?.at(-1)).toBe(tp(maxTraceMarks + 10));
  });
});
