import { append, ownership } from '../../../shared/streams/writerAppend';
import type { WriterState } from '../../../shared/streams/writerState';
import { limits, opened0, request, requestAt } from './fixtures';

function lines(state: WriterState): { producer: string; seq: number; index: number }[] {
  return state.buffer
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

describe('writer append', () => {
  it('numbers accepted events without gaps and writes them as NDJSON lines in order', () => {
    const { state, receipt } = append(
      opened0(),
      request([
        { producer: 'a', seq: 1, data: { x: 1 } },
        { producer: 'b', seq: 7 },
      ]),
    );
    expect(receipt).toEqual({ r: expect.any(String), ok: true, acc: 2, dup: 0, last: 1, kick: true });
    expect(lines(state).map((l) => [l.producer, l.seq, l.index])).toEqual([
      ['a', 1, 0],
      ['b', 7, 1],
    ]);
    expect(JSON.parse(state.buffer.split('\n')[0]!)).toEqual({
      type: 'orders',
      producer: 'a',
      seq: 1,
      index: 0,
      at: '2026-01-01T00:00:00.000Z',
      data: { x: 1 },
    });
    expect(state.nextIndex).toBe(2);
    expect(state.oldestAt).toBe(Date.UTC(2026, 0, 1));
  });

  it('ignores events a producer sent before (a retry) and reports where they are', () => {
    const first = append(
      opened0(),
      request([
        { producer: 'a', seq: 1 },
        { producer: 'a', seq: 2 },
      ]),
    ).state;
    const { state, receipt } = append(
      first,
      request([
        { producer: 'a', seq: 2 },
        { producer: 'a', seq: 3 },
      ]),
    );
    expect(receipt).toMatchObject({ ok: true, acc: 1, dup: 1, last: 2 });
    expect(lines(state).map((l) => l.seq)).toEqual([1, 2, 3]);
    const again = append(state, request([{ producer: 'a', seq: 1 }]));
    expect(again.receipt).toMatchObject({ ok: true, acc: 0, dup: 1, last: 2, kick: false });
    expect(again.state.buffer).toBe(state.buffer);
  });

  it('keeps sequence marks per type and producer', () => {
    const first = append(opened0(), request([{ producer: 'a', seq: 5 }])).state;
    const other = append(first, request([{ producer: 'a', seq: 5 }], { type: 'refunds' }));
    expect(other.receipt).toMatchObject({ ok: true, acc: 1, dup: 0 });
  });

  it('refuses a whole request that does not fit (back-pressure) and counts it, changing nothing else', () => {
    const full = append(opened0(), request([1, 2, 3, 4, 5].map((seq) => ({ producer: 'a', seq })))).state;
    const { state, receipt } = append(
      full,
      request([
        { producer: 'b', seq: 1 },
        { producer: 'b', seq: 2 },
      ]),
    );
    expect(receipt).toEqual({ r: expect.any(String), ok: false, why: 'full' });
    expect(state.buffer).toBe(full.buffer);
    expect(state.producers).toBe(full.producers);
    expect(state.totals.refusedFull).toBe(1);
    // A pure retry of accepted events still succeeds on a full buffer: it adds nothing.
    expect(append(full, request([{ producer: 'a', seq: 5 }])).receipt).toMatchObject({ ok: true, dup: 1 });
  });

  it('refuses a request that would take the unflushed bytes over the limit, counting UTF-8 bytes', () => {
    const bounded = { ...limits, maxBuffered: 1000, maxBufferedBytes: 350 };
    const first = append(opened0(), request([{ producer: 'a', seq: 1, data: 'é'.repeat(50) }], { limits: bounded }));
    expect(first.state.bufferBytes).toBe(Buffer.byteLength(first.state.buffer));
    expect(first.state.bufferBytes).toBe(first.state.buffer.length + 50);
    const second = append(first.state, request([{ producer: 'a', seq: 2, data: 'é'.repeat(50) }], { limits: bounded }));
    expect(second.receipt).toMatchObject({ ok: false, why: 'full' });
    expect(append(first.state, request([{ producer: 'a', seq: 2 }], { limits: bounded })).receipt).toMatchObject({ ok: true, acc: 1 });
  });

  it('asks for a kick when the buffer becomes non-empty and when it reaches N, not in between', () => {
    let state = opened0();
    const kicks: boolean[] = [];
    for (let seq = 1; seq <= 4; seq++) {
      const step = append(state, request([{ producer: 'a', seq }]));
      state = step.state;
      kicks.push(step.receipt.ok && step.receipt.kick);
    }
    expect(kicks).toEqual([true, false, true, false]);
  });
});

describe('filler producers cannot flush an honest producer out of the dedup window', () => {
  const window = 15 * 60_000;
  // The default cap; every event is flushed at once, so only the window protects a mark.
  const capped = {
    ...limits,
    maxProducers: 1000,
    dedupWindowMs: window,
    maxBuffered: 100_000,
    maxBufferedBytes: 64 * 1024 * 1024,
    flushEvents: 100_000,
  };
  const flushedAll = (state: WriterState): WriterState => ({
    ...state,
    buffer: '',
    buffered: 0,
    bufferBytes: 0,
    bufferStart: state.nextIndex,
    flushedThrough: state.nextIndex,
  });

  it('1,200 filler producers within the window cannot make an honest retry count twice: newcomers are refused instead', () => {
    let state = flushedAll(append(opened0(capped), request([{ producer: 'honest', seq: 1 }], { limits: capped, at: requestAt })).state);
    const refused: string[] = [];
    for (let p = 0; p < 1200; p++) {
      const step = append(state, request([{ producer: `filler-${p}`, seq: 1 }], { limits: capped, at: requestAt + 1000 + p }));
      if (!step.receipt.ok) refused.push(step.receipt.why);
      state = flushedAll(step.state);
    }
    expect(Object.keys(state.producers)).toHaveLength(1000);
    expect(refused).toHaveLength(201);
    expect(new Set(refused)).toEqual(new Set(['producers']));
    // The honest producer's retry, still within the window: a duplicate, written once.
    const retry = append(state, request([{ producer: 'honest', seq: 1 }], { limits: capped, at: requestAt + window - 1 }));
    expect(retry.receipt).toMatchObject({ ok: true, acc: 0, dup: 1 });
    // Known producers go on while newcomers wait.
    expect(append(state, request([{ producer: 'filler-5', seq: 2 }], { limits: capped, at: requestAt + 5000 })).receipt).toMatchObject({
      ok: true,
      acc: 1,
    });
  });

  it('a refused newcomer changes nothing', () => {
    const tiny = { ...capped, maxProducers: 2 };
    let state = opened0(tiny);
    for (const producer of ['a', 'b']) state = flushedAll(append(state, request([{ producer, seq: 1 }], { limits: tiny })).state);
    const step = append(state, request([{ producer: 'c', seq: 1 }], { limits: tiny, at: requestAt + 10 }));
    expect(step.receipt).toMatchObject({ ok: false, why: 'producers' });
    expect(step.state).toBe(state);
  });

  it('once marks are older than the window (and flushed) they make room for new producers', () => {
    const tiny = { ...capped, maxProducers: 2 };
    let state = opened0(tiny);
    for (const producer of ['a', 'b']) state = flushedAll(append(state, request([{ producer, seq: 1 }], { limits: tiny })).state);
    const later = append(state, request([{ producer: 'c', seq: 1 }], { limits: tiny, at: requestAt + window + 1 }));
    expect(later.receipt).toMatchObject({ ok: true, acc: 1 });
    expect(Object.keys(later.state.producers)).toEqual(['orders|c']);
  });

  it('one caller cannot take every producer place: past its quota its newcomers are refused, another caller still gets in', () => {
    const quota = { ...capped, maxProducers: 10, maxProducersPerCaller: 3 };
    const ask = (state: WriterState, producers: string[], caller: string | undefined, at = requestAt) =>
      append(
        state,
        request(
          producers.map((producer) => ({ producer, seq: 1 })),
          { limits: quota, at, ...(caller === undefined ? {} : { caller }) },
        ),
      );
    // One request with many new producers from one caller: refused whole, nothing recorded.
    const flood = ask(opened0(quota), ['m1', 'm2', 'm3', 'm4'], 'mallory');
    expect(flood.receipt).toMatchObject({ ok: false, why: 'callerProducers' });
    expect(flood.state.producers).toEqual({});
    let state = flushedAll(ask(opened0(quota), ['m1', 'm2', 'm3'], 'mallory').state);
    expect(ask(state, ['m4'], 'mallory', requestAt + 1).receipt).toMatchObject({ ok: false, why: 'callerProducers' });
    // Mallory's known producers go on; another caller's new producer is admitted.
    const known = append(state, request([{ producer: 'm1', seq: 2 }], { limits: quota, at: requestAt + 2, caller: 'mallory' }));
    expect(known.receipt).toMatchObject({ ok: true, acc: 1 });
    state = flushedAll(ask(state, ['alice-1'], 'alice', requestAt + 3).state);
    expect(Object.values(state.producers).map((m) => m.c)).toEqual(['mallory', 'mallory', 'mallory', 'alice']);
    // The app's own appends (no caller) are not held to any quota.
    expect(ask(state, ['own-1', 'own-2', 'own-3', 'own-4'], undefined, requestAt + 4).receipt).toMatchObject({ ok: true, acc: 4 });
    // Once Mallory's marks age past the window (and are in the log), Mallory may take new producers again.
    expect(ask(state, ['m5'], 'mallory', requestAt + window + 1).receipt).toMatchObject({ ok: true, acc: 1 });
  });

  it('a mark whose event is not in the log yet is kept even past the window', () => {
    const tiny = { ...capped, maxProducers: 1 };
    const state = append(opened0(tiny), request([{ producer: 'a', seq: 1 }], { limits: tiny })).state;
    const step = append(state, request([{ producer: 'b', seq: 1 }], { limits: tiny, at: requestAt + window + 1 }));
    expect(step.receipt).toMatchObject({ ok: false, why: 'producers' });
  });
});

describe("the app's own producers and the callers' cap", () => {
  const window = 15 * 60_000;
  const tiny = {
    ...limits,
    maxProducers: 2,
    dedupWindowMs: window,
    maxBuffered: 100_000,
    maxBufferedBytes: 64 * 1024 * 1024,
    flushEvents: 100_000,
  };
  const flushed = (state: WriterState): WriterState => ({
    ...state,
    buffer: '',
    buffered: 0,
    bufferBytes: 0,
    bufferStart: state.nextIndex,
    flushedThrough: state.nextIndex,
  });
  const own = (producer: string, at: number) => request([{ producer, seq: 0 }], { type: 'ledger', own: true, limits: tiny, at });

  it("takes any number of the app's own producers within the window, and they take no caller's place", () => {
    let state = opened0(tiny);
    for (let job = 0; job < 50; job++) {
      const step = append(state, own(`job-${job}-r0`, requestAt + job));
      expect(step.receipt).toMatchObject({ ok: true, acc: 1 });
      state = flushed(step.state);
    }
    for (const producer of ['a', 'b']) {
      const step = append(state, request([{ producer, seq: 1 }], { limits: tiny, at: requestAt + 100 }));
      expect(step.receipt).toMatchObject({ ok: true, acc: 1 });
      state = flushed(step.state);
    }
    expect(append(state, request([{ producer: 'c', seq: 1 }], { limits: tiny, at: requestAt + 100 })).receipt).toMatchObject({
      ok: false,
      why: 'producers',
    });
    // A repeated delivery of an own producer within the window is still recognised.
    expect(append(state, own('job-7-r0', requestAt + 200)).receipt).toMatchObject({ ok: true, acc: 0, dup: 1 });
    // Past the window, the next own append drops the old own marks: they stay bounded by the app's own rate.
    const later = append(state, own('job-99-r0', requestAt + window + 1000));
    expect(Object.keys(later.state.producers).filter((k) => k.startsWith('ledger|'))).toEqual(['ledger|job-99-r0']);
  });
});

describe('ownership of a type', () => {
  it('takes the default route (version 0) of an unknown type, waits for a handoff otherwise', () => {
    expect(ownership(undefined, 0)).toBe('ok');
    expect(ownership(undefined, 1)).toBe('notReady');
  });
  it('refuses older route versions (re-resolve) and is not ready for newer ones', () => {
    expect(ownership({ version: 2, ready: true }, 2)).toBe('ok');
    expect(ownership({ version: 2, ready: false }, 2)).toBe('notReady');
    expect(ownership({ version: 2, ready: true }, 1)).toBe('notOwner');
    expect(ownership({ version: 2, ready: true }, 3)).toBe('notReady');
    const moved = { version: 0, ready: true, moved: { version: 1, to: 'x', through: 0, adopted: false } };
    expect(ownership(moved, 0)).toBe('notOwner');
    expect(ownership(moved, 1)).toBe('notOwner');
    expect(ownership(moved, 2)).toBe('notReady');
  });
});
