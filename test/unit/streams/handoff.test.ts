import { append, type AppendStep } from '../../../shared/streams/writerAppend';
import { flushed, type FlushedStep, plan } from '../../../shared/streams/writerFlush';
import { adopt, release } from '../../../shared/streams/writerHandoff';
import { fallbackLimits, type WriterState } from '../../../shared/streams/writerState';
import { opened0, request, requestAt as t0 } from './fixtures';

// Large N: only a release (or a test's explicit flush) makes these writers flush at once.
const limits = { ...fallbackLimits, flushEvents: 100 };

function empty(): WriterState {
  return opened0(limits);
}

/** Events `seqs` of `producer` (of `orders` unless told) at route version `version`. */
function send(state: WriterState, producer: string, seqs: number[], version = 0, type = 'orders'): AppendStep {
  return append(
    state,
    request(
      seqs.map((seq) => ({ producer, seq })),
      { type, version, limits },
    ),
  );
}

function withEvents(state: WriterState, type: string, producer: string, seqs: number[], version = 0): WriterState {
  const step = send(state, producer, seqs, version, type);
  if (!step.receipt.ok) throw new Error(`refused: ${step.receipt.why}`);
  return step.state;
}

/** Plans the due flush (failing unless one is due now) and confirms it. */
function flushNow(state: WriterState, key: string): FlushedStep {
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
  });
}

describe('remap handoff', () => {
  const oldKey = 'p00:orders';
  const newKey = 'p05:orders';

  it('refuses the type after release, hands over only once everything accepted is in the log', () => {
    let old = withEvents(empty(), 'orders', 'a', [1, 2, 3]);
    old = withEvents(old, 'refunds', 'z', [1]);
    const released = release(old, { requestId: 'rel', type: 'orders', version: 1, to: newKey });
    expect(released.handoffs).toEqual([]);
    expect(released.receipt).toMatchObject({ ok: true, kick: true });
    // Stale producers (route version 0) are told to re-resolve; other types go on as before.
    expect(send(released.state, 'a', [4]).receipt).toMatchObject({ ok: false, why: 'notOwner' });
    const afterOther = withEvents(released.state, 'refunds', 'z', [2]);
    // The release asked for a flush without waiting for N or T (flushNow fails on anything else).
    const done = flushNow(afterOther, oldKey);
    expect(done.handoffs).toEqual([
      { to: newKey, request: { type: 'orders', version: 1, from: '', producers: { 'orders|a': { seq: 3, index: 2, at: t0 } } } },
    ]);
    expect(done.state.producers['orders|a']).toBeUndefined();
    // The type that stayed keeps its marks: z's last event, accepted after the release at index 4.
    expect(done.state.producers['refunds|z']).toMatchObject({ seq: 2, index: 4, at: t0 });
    expect(done.state.types.orders?.moved?.adopted).toBe(true);
  });

  it('hands over at once when nothing of the writer is unflushed', () => {
    const released = release(empty(), { requestId: 'rel', type: 'orders', version: 1, to: newKey });
    expect(released.handoffs).toHaveLength(1);
  });

  it('makes the new writer wait for the handoff, then keeps recognising old events as duplicates', () => {
    let fresh = empty();
    expect(send(fresh, 'a', [4], 1).receipt).toMatchObject({ ok: false, why: 'notReady' });
    fresh = adopt(fresh, { type: 'orders', version: 1, from: oldKey, producers: { 'orders|a': { seq: 3, index: 2, at: t0 } } }).state;
    const retry = send(fresh, 'a', [3, 4], 1);
    expect(retry.receipt).toMatchObject({ ok: true, acc: 1, dup: 1, last: 0 });
    // A repeated or older handoff changes nothing.
    expect(adopt(retry.state, { type: 'orders', version: 1, from: oldKey, producers: {} }).state).toBe(retry.state);
  });

  it('ignores a repeated release', () => {
    const idle = withEvents(empty(), 'orders', 'a', [1]);
    const once = release(idle, { requestId: 'a', type: 'orders', version: 1, to: newKey });
    const twice = release(once.state, { requestId: 'b', type: 'orders', version: 1, to: newKey });
    expect(twice.state).toBe(once.state);
    expect(twice.handoffs).toEqual([]);
  });

  it('moves a type back and forth (A -> B -> A)', () => {
    let a = withEvents(empty(), 'orders', 'p', [1]);
    let b = empty();
    a = release(a, { requestId: '1', type: 'orders', version: 1, to: newKey }).state;
    a = flushNow(a, oldKey).state;
    b = adopt(b, { type: 'orders', version: 1, from: oldKey, producers: { 'orders|p': { seq: 1, index: 0, at: t0 } } }).state;
    b = withEvents(b, 'orders', 'p', [2], 1);
    const back = release(b, { requestId: '2', type: 'orders', version: 2, to: oldKey });
    b = flushNow(back.state, newKey).state;
    a = adopt(a, { type: 'orders', version: 2, from: newKey, producers: { 'orders|p': { seq: 2, index: 0, at: t0 } } }).state;
    expect(send(a, 'p', [2, 3], 2).receipt).toMatchObject({ ok: true, acc: 1, dup: 1 });
    expect(b.types.orders?.moved?.version).toBe(2);
  });

  it('two remaps in quick succession (A -> B -> C): B passes the type on only after A handed it over', () => {
    const cKey = 'p07:orders';
    let a = withEvents(empty(), 'orders', 'p', [1, 2]);
    let b = empty();
    let c = empty();
    a = release(a, { requestId: '1', type: 'orders', version: 1, to: newKey }).state;
    // B is told to release version 2 before A's handoff of version 1 reached it: it must not hand over yet.
    const early = release(b, { requestId: '2', type: 'orders', version: 2, to: cKey });
    expect(early.handoffs).toEqual([]);
    b = early.state;
    expect(send(c, 'p', [3], 2).receipt).toMatchObject({ ok: false, why: 'notReady' });
    // A flushes and hands over to B; B forwards at once (it never accepted the type itself), with A's marks.
    const handed = flushNow(a, oldKey);
    expect(handed.handoffs).toHaveLength(1);
    const forwarded = adopt(b, handed.handoffs[0]!.request);
    expect(forwarded.handoffs).toEqual([
      { to: cKey, request: { type: 'orders', version: 2, from: '', producers: { 'orders|p': { seq: 2, index: -1, at: t0 } } } },
    ]);
    c = adopt(c, forwarded.handoffs[0]!.request).state;
    expect(send(c, 'p', [2, 3], 2).receipt).toMatchObject({ ok: true, acc: 1, dup: 1 });
  });
});
