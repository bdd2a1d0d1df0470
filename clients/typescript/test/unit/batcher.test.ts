import fc from 'fast-check';

import { Batcher } from '../../src/batcher';
import { Counters } from '../../src/counters';
import { FakeClock, settle } from '../support/fakeClock';
import { type Handler, json, problem } from '../support/fakeFetch';
import { fakeTransport } from '../support/fakeTransport';

/** A batcher whose sends wait until the test answers them; each item's result is its value doubled. */
function held(maxInFlight: number, maxSize = 100, lingerMs = 0) {
  const clock = new FakeClock();
  const sends: { items: readonly number[]; answer: () => void; fail: (err: unknown) => void }[] = [];
  const batcher = new Batcher<number, number>({
    maxInFlight,
    lingerMs,
    sleep: (ms) => clock.sleep(ms),
    size: () => 1,
    maxSize,
    send: (items) => new Promise((resolve, reject) => sends.push({ items, answer: () => resolve(items.map((n) => n * 2)), fail: reject })),
  });
  return { batcher, sends, clock };
}

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved' as const,
    (err: unknown) => err,
  );

describe('Batcher', () => {
  test('sends up to maxInFlight batches at once; the waiting batch grows until a slot frees', async () => {
    const { batcher, sends } = held(2);
    const a = batcher.add(1);
    await settle();
    const b = batcher.add(2);
    await settle();
    const rest = [3, 4, 5].map((n) => batcher.add(n));
    await settle();
    expect(sends.map((s) => s.items)).toEqual([[1], [2]]);
    const more = [6, 7].map((n) => batcher.add(n));
    await settle();
    expect(sends).toHaveLength(2);
    sends[0]?.answer();
    await expect(a).resolves.toBe(2);
    await settle();
    expect(sends.map((s) => s.items)).toEqual([[1], [2], [3, 4, 5, 6, 7]]);
    sends[1]?.answer();
    sends[2]?.answer();
    await expect(b).resolves.toBe(4);
    await expect(Promise.all([...rest, ...more])).resolves.toEqual([6, 8, 10, 12, 14]);
    expect(batcher.sent).toBe(3);
  });

  test('calls made in the same turn share one request even when slots are free', async () => {
    const { batcher, sends } = held(8);
    const all = [1, 2, 3].map((n) => batcher.add(n));
    await settle();
    expect(sends.map((s) => s.items)).toEqual([[1, 2, 3]]);
    sends[0]?.answer();
    await expect(Promise.all(all)).resolves.toEqual([2, 4, 6]);
  });

  test('a batch never passes maxSize; a kind change starts a new batch', async () => {
    const sends: (readonly string[])[] = [];
    const batcher = new Batcher<string, string>({
      maxInFlight: 1,
      lingerMs: 0,
      sleep: () => Promise.resolve(),
      kind: (s) => s[0] ?? '',
      size: (s) => s.length,
      maxSize: 4,
      send: (items) => {
        sends.push(items);
        return Promise.resolve(items);
      },
    });
    await Promise.all(['a1', 'a2', 'a3', 'b1', 'bbbbbb', 'b2'].map((s) => batcher.add(s)));
    expect(sends).toEqual([['a1', 'a2'], ['a3'], ['b1'], ['bbbbbb'], ['b2']]);
  });

  test('an abort before the batch is sent detaches the caller at once and withdraws its item', async () => {
    const { batcher, sends } = held(1);
    const first = batcher.add(1);
    await settle();
    const controller = new AbortController();
    const kept = batcher.add(2);
    const withdrawn = batcher.add(3, controller.signal);
    controller.abort();
    await expect(withdrawn).rejects.toMatchObject({ name: 'AbortError' });
    sends[0]?.answer();
    await first;
    await settle();
    expect(sends.map((s) => s.items)).toEqual([[1], [2]]);
    sends[1]?.answer();
    await expect(kept).resolves.toBe(4);
  });

  test('an abort in flight rejects that caller at once; the request goes on for the others', async () => {
    const { batcher, sends } = held(1);
    const controller = new AbortController();
    const aborted = batcher.add(1, controller.signal);
    const other = batcher.add(2);
    await settle();
    expect(sends).toHaveLength(1);
    controller.abort(new Error('caller gave up'));
    await expect(aborted).rejects.toThrow('caller gave up');
    expect(batcher.idle).toBe(false);
    sends[0]?.answer();
    await expect(other).resolves.toBe(4);
    expect(sends.map((s) => s.items)).toEqual([[1, 2]]);
  });

  test('an already-aborted signal rejects without queueing anything', async () => {
    const { batcher, sends } = held(1);
    await expect(batcher.add(1, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
    await settle();
    expect(sends).toHaveLength(0);
    expect(batcher.idle).toBe(true);
  });

  test('a failed batch rejects exactly its own callers; the others are unaffected', async () => {
    const { batcher, sends } = held(2);
    const failing = [1, 2].map((n) => rejection(batcher.add(n)));
    await settle();
    const fine = [3, 4].map((n) => batcher.add(n));
    await settle();
    expect(sends.map((s) => s.items)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    sends[0]?.fail(new Error('boom'));
    sends[1]?.answer();
    await expect(Promise.all(fine)).resolves.toEqual([6, 8]);
    const errors = await Promise.all(failing);
    expect(errors.map((e) => (e as Error).message)).toEqual(['boom', 'boom']);
  });

  test('whenIdle waits for batches still waiting for a slot, not only those in flight', async () => {
    const { batcher, sends } = held(1);
    void batcher.add(1);
    await settle();
    void batcher.add(2);
    let idle = false;
    const waiting = batcher.whenIdle().then(() => (idle = true));
    sends[0]?.answer();
    await settle();
    expect(idle).toBe(false);
    sends[1]?.answer();
    await waiting;
    expect(batcher.idle).toBe(true);
  });
});

describe('Batcher: the Kafka producer model', () => {
  test('a batch lingers for more items, then goes when its linger is over', async () => {
    const { batcher, sends, clock } = held(4, 100, 5);
    const all = [batcher.add(1)];
    await clock.advance(2);
    all.push(batcher.add(2));
    await clock.advance(2);
    all.push(batcher.add(3));
    expect(sends).toHaveLength(0);
    await clock.advance(1);
    expect(sends.map((s) => s.items)).toEqual([[1, 2, 3]]);
    all.push(batcher.add(4));
    await clock.advance(5);
    expect(sends.map((s) => s.items)).toEqual([[1, 2, 3], [4]]);
    for (const s of sends) s.answer();
    await expect(Promise.all(all)).resolves.toEqual([2, 4, 6, 8]);
  });

  test('a full batch goes at once, without waiting out its linger', async () => {
    const { batcher, sends, clock } = held(4, 3, 1000);
    const all = [1, 2, 3, 4].map((n) => batcher.add(n));
    await settle();
    expect(sends.map((s) => s.items)).toEqual([[1, 2, 3]]);
    expect(clock.pending()).toEqual([1000, 1000]);
    batcher.flushNow();
    await settle();
    expect(sends.map((s) => s.items)).toEqual([[1, 2, 3], [4]]);
    for (const s of sends) s.answer();
    await expect(Promise.all(all)).resolves.toEqual([2, 4, 6, 8]);
  });

  test('batches leave in the order they opened, whatever order their requests are answered in', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constant('add' as const), fc.constant('tick' as const), fc.nat(5)), { minLength: 1, maxLength: 80 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 3 }),
        async (steps, maxInFlight, maxSize, lingerMs) => {
          const { batcher, sends, clock } = held(maxInFlight, maxSize, lingerMs);
          const added: number[] = [];
          const all: Promise<number>[] = [];
          const answered = new Set<number>();
          const answer = (i: number): void => {
            answered.add(i);
            sends[i]?.answer();
          };
          const open = (): number[] => sends.map((_, i) => i).filter((i) => !answered.has(i));
          for (const step of steps) {
            if (step === 'add') {
              added.push(added.length);
              all.push(batcher.add(added.length - 1));
            } else if (step === 'tick') await clock.advance(1);
            else {
              // Any request out may be answered first, not only the oldest.
              const out = open();
              if (out.length > 0) answer(out[step % out.length] as number);
              await settle(2);
            }
            expect(open().length).toBeLessThanOrEqual(maxInFlight);
          }
          while (!batcher.idle) {
            batcher.flushNow();
            await settle(2);
            open().forEach(answer);
            await settle(2);
          }
          await expect(Promise.all(all)).resolves.toEqual(added.map((n) => n * 2));
          // Taken in the order the requests were sent, the items are in the order they were added.
          expect(sends.flatMap((s) => s.items)).toEqual(added);
          expect(sends.every((s) => s.items.length <= maxSize)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('Counters on the batcher: exact counts', () => {
  test('whatever fails, the server holds exactly the sum of the increments that resolved', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ by: fc.integer({ min: -5, max: 9 }).filter((n) => n !== 0), turn: fc.nat(3) }), {
          minLength: 1,
          maxLength: 60,
        }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 4 }),
        async (increments, failures, maxInFlight) => {
          let stored = 0;
          let request = 0;
          const handler: Handler = async (r) => {
            const fails = failures[request++ % failures.length] === true;
            await new Promise((resolve) => setImmediate(resolve));
            if (fails) return problem(400, 'ValidationFailed');
            stored += (r.body as { by: number }).by;
            return json(202, {});
          };
          const { transport } = fakeTransport(handler);
          const counters = new Counters(transport, { maxInFlight, lingerMs: 0 });
          const outcomes: Promise<{ by: number; ok: boolean }>[] = [];
          for (let turn = 0; turn <= 3; turn++) {
            for (const i of increments.filter((x) => x.turn === turn)) {
              outcomes.push(
                counters.increment('c', i.by).then(
                  () => ({ by: i.by, ok: true }),
                  () => ({ by: i.by, ok: false }),
                ),
              );
            }
            await new Promise((resolve) => setImmediate(resolve));
          }
          const settled = await Promise.all(outcomes);
          await counters.flush();
          expect(stored).toBe(settled.filter((o) => o.ok).reduce((sum, o) => sum + o.by, 0));
        },
      ),
      { numRuns: 150 },
    );
  });

  test('an increment aborted before its batch is sent is not counted; one aborted in flight is', async () => {
    let stored = 0;
    const releases: (() => void)[] = [];
    const handler: Handler = (r) =>
      new Promise((resolve) =>
        releases.push(() => {
          stored += (r.body as { by: number }).by;
          resolve(json(202, {}));
        }),
      );
    const { transport } = fakeTransport(handler);
    const counters = new Counters(transport, { maxInFlight: 1, lingerMs: 0 });
    const inFlight = new AbortController();
    const early = new AbortController();
    const a = rejection(counters.increment('c', 5, { abortSignal: inFlight.signal }));
    await settle();
    const b = rejection(counters.increment('c', 7, { abortSignal: early.signal }));
    const c = counters.increment('c', 11);
    inFlight.abort();
    early.abort();
    expect(await a).toMatchObject({ name: 'AbortError' });
    expect(await b).toMatchObject({ name: 'AbortError' });
    releases.shift()?.();
    await settle();
    releases.shift()?.();
    await c;
    await counters.flush();
    expect(stored).toBe(5 + 11);
  });
});
