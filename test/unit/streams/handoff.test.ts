import { append } from '../../../shared/streams/writerAppend.entity';
import { flushed, opened, plan } from '../../../shared/streams/writerFlush.entity';
import { adopt, release } from '../../../shared/streams/writerHandoff.entity';
import { fallbackLimits, initialWriterState, type WriterState } from '../../../shared/streams/writerState';

const limits = { ...fallbackLimits, flushEvents: 100 };
const t0 = Date.UTC(2026, 0, 1);
let n = 0;

function withEvents(state: WriterState, type: string, producer: string, seqs: number[], version = 0): WriterState {
  const step = append(state, { requestId: `r${++n}`, type, version, at: t0, limits, events: seqs.map((seq) => ({ producer, seq })) });
  if (!step.receipt.ok) throw new Error(`refused: ${step.receipt.why}`);
  return step.state;
}

function flushAll(state: WriterState, key: string): WriterState {
  const step = plan(state, key, t0);
  if (step.plan.kind !== 'flush') throw new Error(`expected a flush, got ${step.plan.kind}`);
  const batch = step.plan.batch;
  return flushed(step.state, {
    batchId: batch.id,
    cursor: { ...batch.cursor, position: batch.cursor.position + batch.text.length, blocks: batch.cursor.blocks + 1 },
    bytes: batch.text.length,
    blocks: 1,
    blocksFoundWritten: 0,
    blobs: ['x'],
    at: t0,
  }).state;
}

describe('remap handoff', () => {
  const oldKey = 'p00:orders';
  const newKey = 'p05:orders';

  it('refuses the type after release, hands over only once everything accepted is in the log', () => {
    let old = withEvents(opened(initialWriterState(limits), { blob: 0, position: 0, blocks: 0 }), 'orders', 'a', [1, 2, 3]);
    old = withEvents(old, 'refunds', 'z', [1]);
    const released = release(old, { requestId: 'rel', type: 'orders', version: 1, to: newKey });
    expect(released.handoffs).toEqual([]);
    expect(released.receipt).toMatchObject({ ok: true, kick: true });
    // Stale producers (route version 0) are told to re-resolve; other types go on as before.
    expect(
      append(released.state, { requestId: 'late', type: 'orders', version: 0, at: t0, limits, events: [{ producer: 'a', seq: 4 }] })
        .receipt,
    ).toMatchObject({ ok: false, why: 'notOwner' });
    const afterOther = withEvents(released.state, 'refunds', 'z', [2]);
    // The release asked for a flush without waiting for N or T.
    const step = plan(afterOther, oldKey, t0);
    expect(step.plan.kind).toBe('flush');
    if (step.plan.kind !== 'flush') return;
    const done = flushed(step.state, {
      batchId: step.plan.batch.id,
      cursor: { blob: 0, position: 10, blocks: 1 },
      bytes: 10,
      blocks: 1,
      blocksFoundWritten: 0,
      blobs: ['x'],
      at: t0,
    });
    expect(done.handoffs).toEqual([
      { to: newKey, request: { type: 'orders', version: 1, from: '', producers: { 'orders|a': { seq: 3, index: 2, at: t0 } } } },
    ]);
    expect(done.state.producers['orders|a']).toBeUndefined();
    expect(done.state.producers['refunds|z']).toBeDefined();
    expect(done.state.types.orders?.moved?.adopted).toBe(true);
  });

  it('hands over at once when nothing of the writer is unflushed', () => {
    const idle = opened(initialWriterState(limits), { blob: 0, position: 0, blocks: 0 });
    const released = release(idle, { requestId: 'rel', type: 'orders', version: 1, to: newKey });
    expect(released.handoffs).toHaveLength(1);
  });

  it('makes the new writer wait for the handoff, then keeps recognising old events as duplicates', () => {
    let fresh = opened(initialWriterState(limits), { blob: 0, position: 0, blocks: 0 });
    expect(
      append(fresh, { requestId: 'early', type: 'orders', version: 1, at: t0, limits, events: [{ producer: 'a', seq: 4 }] }).receipt,
    ).toMatchObject({
      ok: false,
      why: 'notReady',
    });
    fresh = adopt(fresh, { type: 'orders', version: 1, from: oldKey, producers: { 'orders|a': { seq: 3, index: 2, at: t0 } } }).state;
    const retry = append(fresh, {
      requestId: 'retry',
      type: 'orders',
      version: 1,
      at: t0,
      limits,
      events: [
        { producer: 'a', seq: 3 },
        { producer: 'a', seq: 4 },
      ],
    });
    expect(retry.receipt).toMatchObject({ ok: true, acc: 1, dup: 1, last: 0 });
    // A repeated or older handoff changes nothing.
    expect(adopt(retry.state, { type: 'orders', version: 1, from: oldKey, producers: {} }).state).toBe(retry.state);
  });

  it('ignores a repeated release', () => {
    const idle = withEvents(opened(initialWriterState(limits), { blob: 0, position: 0, blocks: 0 }), 'orders', 'a', [1]);
    const once = release(idle, { requestId: 'a', type: 'orders', version: 1, to: newKey });
    const twice = release(once.state, { requestId: 'b', type: 'orders', version: 1, to: newKey });
    expect(twice.state).toBe(once.state);
    expect(twice.handoffs).toEqual([]);
  });

  it('moves a type back and forth (A -> B -> A)', () => {
    let a = withEvents(opened(initialWriterState(limits), { blob: 0, position: 0, blocks: 0 }), 'orders', 'p', [1]);
    let b = opened(initialWriterState(limits), { blob: 0, position: 0, blocks: 0 });
    a = release(a, { requestId: '1', type: 'orders', version: 1, to: newKey }).state;
    a = flushAll(a, oldKey);
    b = adopt(b, { type: 'orders', version: 1, from: oldKey, producers: { 'orders|p': { seq: 1, index: 0, at: t0 } } }).state;
    b = withEvents(b, 'orders', 'p', [2], 1);
    const back = release(b, { requestId: '2', type: 'orders', version: 2, to: oldKey });
    b = flushAll(back.state, newKey);
    a = adopt(a, { type: 'orders', version: 2, from: newKey, producers: { 'orders|p': { seq: 2, index: 0, at: t0 } } }).state;
    const step = append(a, {
      requestId: 'x',
      type: 'orders',
      version: 2,
      at: t0,
      limits,
      events: [
        { producer: 'p', seq: 2 },
        { producer: 'p', seq: 3 },
      ],
    });
    expect(step.receipt).toMatchObject({ ok: true, acc: 1, dup: 1 });
    expect(b.types.orders?.moved?.version).toBe(2);
  });
  it('two remaps in quick succession (A -> B -> C): B passes the type on only after A handed it over', () => {
    const cKey = 'p07:orders';
    let a = withEvents(opened(initialWriterState(limits), { blob: 0, position: 0, blocks: 0 }), 'orders', 'p', [1, 2]);
    let b = opened(initialWriterState(limits), { blob: 0, position: 0, blocks: 0 });
    let c = opened(initialWriterState(limits), { blob: 0, position: 0, blocks: 0 });
    a = release(a, { requestId: '1', type: 'orders', version: 1, to: newKey }).state;
    // B is told to release version 2 before A's handoff of version 1 reached it: it must not hand over yet.
    const early = release(b, { requestId: '2', type: 'orders', version: 2, to: cKey });
    expect(early.handoffs).toEqual([]);
    b = early.state;
    expect(
      append(c, { requestId: 'c', type: 'orders', version: 2, at: t0, limits, events: [{ producer: 'p', seq: 3 }] }).receipt,
    ).toMatchObject({ ok: false, why: 'notReady' });
    // A flushes and hands over to B; B forwards at once (it never accepted the type itself), with A's marks.
    const aFlushed = plan(a, oldKey, t0);
    if (aFlushed.plan.kind !== 'flush') throw new Error('expected a flush');
    const handed = flushed(aFlushed.state, {
      batchId: aFlushed.plan.batch.id,
      cursor: { blob: 0, position: 1, blocks: 1 },
      bytes: 1,
      blocks: 1,
      blocksFoundWritten: 0,
      blobs: ['x'],
      at: t0,
    });
    expect(handed.handoffs).toHaveLength(1);
    const forwarded = adopt(b, handed.handoffs[0]!.request);
    expect(forwarded.handoffs).toEqual([
      { to: cKey, request: { type: 'orders', version: 2, from: '', producers: { 'orders|p': { seq: 2, index: -1, at: t0 } } } },
    ]);
    c = adopt(c, forwarded.handoffs[0]!.request).state;
    const step = append(c, {
      requestId: 'c2',
      type: 'orders',
      version: 2,
      at: t0,
      limits,
      events: [
        { producer: 'p', seq: 2 },
        { producer: 'p', seq: 3 },
      ],
    });
    expect(step.receipt).toMatchObject({ ok: true, acc: 1, dup: 1 });
  });
});
