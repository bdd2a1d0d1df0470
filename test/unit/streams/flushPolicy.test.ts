import { append } from '../../../shared/streams/writerAppend';
import { flushed, flushFailed, plan, requestFlush } from '../../../shared/streams/writerFlush';
import { depthOf, initialWriterState } from '../../../shared/streams/writerState';
import { limits, opened0, request } from './fixtures';

const key = 'p01:orders';

describe('flush plan', () => {
  const t0 = Date.UTC(2026, 0, 1, 12);

  it('opens the log first', () => {
    expect(plan(initialWriterState(limits), key, t0).plan).toEqual({ kind: 'open' });
  });

  it('idles on an empty buffer until the recheck time', () => {
    expect(plan(opened0(), key, t0).plan).toEqual({ kind: 'idle', until: t0 + limits.idleRecheckMs });
  });

  it('waits T after it first sees events, then flushes them (age trigger on the flusher clock)', () => {
    const buffered = append(opened0(), request([{ producer: 'a', seq: 1 }])).state;
    const first = plan(buffered, key, t0);
    expect(first.plan).toEqual({ kind: 'wait', until: t0 + 1000 });
    expect(plan(first.state, key, t0 + 999).plan).toEqual({ kind: 'wait', until: t0 + 1000 });
    const due = plan(first.state, key, t0 + 1000);
    expect(due.plan.kind).toBe('flush');
    expect(depthOf(due.state)).toBe(1);
    expect(due.plan.kind === 'flush' && due.plan.batch.bytes).toBe(Buffer.byteLength(buffered.buffer));
    expect(due.state.bufferBytes).toBe(0);
    expect(due.state.buffered).toBe(0);
  });

  it('flushes at once when N events are buffered (size trigger)', () => {
    const state = append(opened0(), request([1, 2, 3].map((seq) => ({ producer: 'a', seq })))).state;
    const step = plan(state, key, t0);
    expect(step.plan.kind).toBe('flush');
    if (step.plan.kind !== 'flush') return;
    expect(step.plan.batch).toMatchObject({
      id: 1,
      count: 3,
      firstIndex: 0,
      partition: 'p01',
      resource: 'orders',
      cursor: { blob: 0, position: 0, blocks: 0 },
    });
    expect(step.plan.batch.text.split('\n')).toHaveLength(4);
  });

  it('flushes at once when a flush was asked for, and reports what the caller must wait for', () => {
    const state = append(opened0(), request([{ producer: 'a', seq: 1 }])).state;
    const asked = requestFlush(state, { requestId: 'f' });
    expect(asked.receipt).toMatchObject({ ok: true, last: 0, kick: true });
    expect(plan(asked.state, key, t0).plan.kind).toBe('flush');
  });

  it('caps a flush at flushMaxEvents and keeps the rest due', () => {
    const capped = { ...limits, flushMaxEvents: 2, flushEvents: 100 };
    const state = append(
      opened0(),
      request(
        [1, 2, 3].map((seq) => ({ producer: 'a', seq })),
        { limits: capped },
      ),
    ).state;
    const waited = plan(state, key, t0).state;
    const first = plan(waited, key, t0 + 1000);
    expect(first.plan.kind === 'flush' && first.plan.batch.count).toBe(2);
    const done = flushed(first.state, {
      batchId: 1,
      cursor: { blob: 0, position: 100, blocks: 1 },
      bytes: 100,
      blocks: 1,
      blocksFoundWritten: 0,
      blobs: ['b'],
      at: t0,
    });
    const second = plan(done.state, key, t0 + 1001);
    expect(second.plan.kind === 'flush' && second.plan.batch).toMatchObject({
      count: 1,
      firstIndex: 2,
      cursor: { position: 100, blocks: 1 },
    });
  });

  it('retries the very same batch until it is confirmed, backing off after failures', () => {
    const state = append(opened0(), request([1, 2, 3].map((seq) => ({ producer: 'a', seq })))).state;
    const taken = plan(state, key, t0);
    if (taken.plan.kind !== 'flush') throw new Error('expected a flush');
    const batch = taken.plan.batch;
    // More events arrive while the batch is in flight: they wait for the next batch.
    const more = append(taken.state, request([{ producer: 'b', seq: 1 }])).state;
    const failed = flushFailed(more, batch.id, 'storage down', t0);
    expect(plan(failed, key, t0 + 500).plan).toEqual({ kind: 'backoff', until: t0 + 1000 });
    const retry = plan(failed, key, t0 + 1000).plan;
    expect(retry.kind === 'flush' && { ...retry.batch, attempts: 0 }).toEqual(batch);
    const twice = flushFailed(failed, batch.id, 'again', t0 + 1000);
    expect(plan(twice, key, t0 + 2500).plan).toEqual({ kind: 'backoff', until: t0 + 3000 });
  });

  it('moves flushed-through on confirmation, ignores a stale confirmation', () => {
    const state = append(opened0(), request([1, 2, 3].map((seq) => ({ producer: 'a', seq })))).state;
    const taken = plan(state, key, t0).state;
    const outcome = {
      batchId: 1,
      cursor: { blob: 0, position: 300, blocks: 1 },
      bytes: 300,
      blocks: 1,
      blocksFoundWritten: 0,
      blobs: ['p01/orders/000000.ndjson'],
      at: t0,
    };
    const done = flushed(taken, outcome).state;
    expect(done).toMatchObject({ flushedThrough: 3, inflight: null, cursor: outcome.cursor, oldestAt: null, lastError: null });
    expect(done.lastFlush).toMatchObject({ events: 3, bytes: 300, blob: 'p01/orders/000000.ndjson' });
    expect(flushed(done, outcome).state).toBe(done);
  });
  it('treats a full buffer as due even below N (the buffer cannot hold N)', () => {
    const tight = { ...limits, flushEvents: 50, maxBuffered: 4 };
    const state = append(
      opened0(),
      request(
        [1, 2, 3, 4].map((seq) => ({ producer: 'a', seq })),
        { limits: tight },
      ),
    );
    expect(state.receipt).toMatchObject({ ok: true, kick: true });
    expect(plan(state.state, key, t0).plan.kind).toBe('flush');
  });
});

describe('idle flushers end', () => {
  const key = 'p00:orders';

  it('an idle writer lets its flusher retire after one idle recheck interval; the next append asks for a new flusher', () => {
    const t0 = 1_000_000;
    const first = plan(opened0(), key, t0);
    expect(first.plan).toEqual({ kind: 'idle', until: t0 + limits.idleRecheckMs });
    expect(plan(first.state, key, t0 + limits.idleRecheckMs - 1).plan.kind).toBe('idle');
    const retired = plan(first.state, key, t0 + limits.idleRecheckMs);
    expect(retired.plan).toEqual({ kind: 'retire' });
    expect(retired.state.retired).toBe(true);
    const step = append(retired.state, request([{ producer: 'a', seq: 1 }]));
    expect(step.receipt).toMatchObject({ ok: true, acc: 1, kick: true, restart: true });
    // Every append until a flusher plans again asks for one.
    expect(append(step.state, request([{ producer: 'a', seq: 2 }])).receipt).toMatchObject({ ok: true, restart: true });
    const planned = plan(step.state, key, t0 + limits.idleRecheckMs + 10);
    expect(planned.state.retired).toBe(false);
    expect(planned.plan.kind).not.toBe('retire');
    expect(append(planned.state, request([{ producer: 'a', seq: 3 }])).receipt).not.toHaveProperty('restart');
  });

  it('work between two idle looks restarts the idle interval', () => {
    const t0 = 1_000_000;
    const idle = plan(opened0(), key, t0).state;
    const busy = append(idle, request([{ producer: 'a', seq: 1 }])).state;
    const waiting = plan(busy, key, t0 + 10).state;
    expect(waiting.idleSince).toBeNull();
    const emptied = { ...waiting, buffer: '', buffered: 0, bufferBytes: 0, bufferStart: 1, flushedThrough: 1, dueAt: null };
    expect(plan(emptied, key, t0 + limits.idleRecheckMs + 20).plan.kind).toBe('idle');
  });
});
