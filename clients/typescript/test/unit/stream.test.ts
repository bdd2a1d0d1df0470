import fc from 'fast-check';

import { Stream } from '../../src/stream';
import { settle } from '../support/fakeClock';
import { fakeTransport } from '../support/fakeTransport';
import { type Handler, json, problem } from '../support/fakeFetch';

interface SentEvent {
  producer: string;
  seq: number;
  data: unknown;
}

/** A writer that sends at the end of each turn (lingerMs 0) unless the test asks for a linger. */
function stream(handler: Handler, options: ConstructorParameters<typeof Stream>[2] = { producer: 'p1', firstSeq: 100 }) {
  const { transport, clock, requests } = fakeTransport(handler);
  return { stream: new Stream(transport, 'orders', { lingerMs: 0, ...options }), clock, requests };
}

const events = (r: { body: unknown }) => (r.body as { events: SentEvent[] }).events;
const answer = (accepted: number) => json(202, { type: 'orders', accepted, duplicates: 0, lastIndex: 0, ack: 'buffered', flushed: false });

describe('Stream', () => {
  test('an append aborted while it waits behind a request is withdrawn; the others go on in order', async () => {
    const releases: (() => void)[] = [];
    const { stream: s, requests } = stream(() => new Promise((resolve) => releases.push(() => resolve(answer(1)))), {
      producer: 'p1',
      firstSeq: 100,
      maxInFlight: 1,
    });
    const first = s.append({ n: 1 });
    await settle();
    const controller = new AbortController();
    const withdrawn = s.append({ n: 2 }, { abortSignal: controller.signal });
    const kept = s.append({ n: 3 });
    controller.abort();
    await expect(withdrawn).rejects.toMatchObject({ name: 'AbortError' });
    releases.shift()?.();
    await first;
    await settle();
    releases.shift()?.();
    await expect(kept).resolves.toMatchObject({ seqs: [102] });
    expect(requests.map((r) => events(r).map((e) => e.seq))).toEqual([[100], [102]]);
  });

  test('events get the producer id and increasing seqs, in call order', async () => {
    const { stream: s, requests } = stream(() => answer(1));
    const a = await s.append({ n: 1 });
    const b = await s.append([{ n: 2 }, { n: 3 }]);
    expect(a.seqs).toEqual([100]);
    expect(b.seqs).toEqual([101, 102]);
    expect(requests.flatMap(events)).toEqual([
      { producer: 'p1', seq: 100, data: { n: 1 } },
      { producer: 'p1', seq: 101, data: { n: 2 } },
      { producer: 'p1', seq: 102, data: { n: 3 } },
    ]);
  });

  test('a retry after a lost response sends the same producer and seqs, so the server sees duplicates', async () => {
    let calls = 0;
    const {
      stream: s,
      clock,
      requests,
    } = stream(() => {
      calls++;
      if (calls === 1) throw new TypeError('connection reset');
      return answer(0);
    });
    const done = s.append({ order: 'A' }, { ack: 'flushed' });
    await clock.advance(1000);
    await done;
    expect(requests).toHaveLength(2);
    expect(events(requests[1]!)).toEqual(events(requests[0]!));
    expect(requests.map((r) => r.query.get('ack'))).toEqual(['flushed', 'flushed']);
  });

  test('with one request in flight, appends made meanwhile go together in the next, each ack in its own', async () => {
    const holds: (() => void)[] = [];
    const { stream: s, requests } = stream(() => new Promise((resolve) => holds.push(() => resolve(answer(1)))), {
      producer: 'p1',
      firstSeq: 100,
      maxInFlight: 1,
    });
    const first = s.append('a');
    await settle();
    const later = [s.append('b'), s.append('c'), s.append('d', { ack: 'flushed' })];
    await settle();
    expect(requests).toHaveLength(1);
    holds.shift()?.();
    await first;
    await settle();
    expect(requests).toHaveLength(2);
    expect(events(requests[1]!).map((e) => e.seq)).toEqual([101, 102]);
    holds.shift()?.();
    await settle();
    holds.shift()?.();
    await Promise.all(later);
    expect(requests.map((r) => r.query.get('ack'))).toEqual(['buffered', 'buffered', 'flushed']);
  });

  test('up to four requests are out at once; each first resends the events of those before it still unanswered', async () => {
    const holds: (() => void)[] = [];
    const { stream: s, requests } = stream(() => new Promise((resolve) => holds.push(() => resolve(answer(1)))));
    const appended: Promise<unknown>[] = [];
    for (const n of [1, 2, 3, 4, 5]) {
      appended.push(s.append(n));
      await settle();
    }
    expect(requests.map((r) => events(r).map((e) => e.seq))).toEqual([[100], [100, 101], [100, 101, 102], [100, 101, 102, 103]]);
    holds.shift()?.();
    await settle();
    // The first is answered: the fifth carries only what is still out.
    expect(events(requests[4]!).map((e) => e.seq)).toEqual([101, 102, 103, 104]);
    holds.splice(0).forEach((h) => h());
    await settle();
    holds.splice(0).forEach((h) => h());
    await expect(Promise.all(appended)).resolves.toHaveLength(5);
  });

  test('a batch that would not fit in one request beside those out waits for them, and resends nothing', async () => {
    const holds: (() => void)[] = [];
    const { stream: s, requests } = stream(() => new Promise((resolve) => holds.push(() => resolve(answer(300)))));
    const first = s.append(Array.from({ length: 300 }, (_, i) => i));
    await settle();
    const second = s.append(Array.from({ length: 300 }, (_, i) => i));
    await settle();
    expect(requests).toHaveLength(1);
    holds.shift()?.();
    await first;
    await settle();
    expect(requests.map((r) => events(r).length)).toEqual([300, 300]);
    expect(events(requests[1]!)[0]?.seq).toBe(400);
    holds.shift()?.();
    await second;
  });

  test('by default an append lingers 5 ms for others to share its request', async () => {
    const { transport, clock, requests } = fakeTransport(() => answer(2));
    const s = new Stream(transport, 'orders', { producer: 'p1', firstSeq: 100 });
    const done = [s.append('a')];
    await clock.advance(4);
    done.push(s.append('b'));
    expect(requests).toHaveLength(0);
    await clock.advance(1);
    await Promise.all(done);
    expect(requests.map((r) => events(r).map((e) => e.seq))).toEqual([[100, 101]]);
  });

  test('whatever order requests land in and whichever are refused, every append that resolved is in the log', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ events: fc.integer({ min: 1, max: 3 }), flushed: fc.boolean() }), { minLength: 1, maxLength: 25 }),
        fc.array(fc.record({ pick: fc.nat(7), refuse: fc.boolean() }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 4 }),
        async (appends, arrivals, maxInFlight) => {
          // The server: one mark per producer; an event whose seq is not above it is a duplicate.
          const log: number[] = [];
          const out: { seqs: number[]; refuse: boolean; answer: (r: Response) => void }[] = [];
          const { stream: s } = stream(
            (r) => new Promise((resolve) => out.push({ seqs: events(r).map((e) => e.seq), refuse: false, answer: resolve })),
            { producer: 'p1', firstSeq: 1, maxInFlight },
          );
          const land = (i: number, refuse: boolean): void => {
            const [request] = out.splice(i, 1);
            if (request === undefined) return;
            if (refuse) return request.answer(problem(400, 'ValidationFailed'));
            let accepted = 0;
            for (const seq of request.seqs)
              if (seq > (log.at(-1) ?? 0)) {
                log.push(seq);
                accepted++;
              }
            request.answer(answer(accepted));
          };
          const results = appends.map((a, i) =>
            s
              .append(
                Array.from({ length: a.events }, () => i),
                { ack: a.flushed ? 'flushed' : 'buffered' },
              )
              .then(
                (r) => r.seqs,
                () => undefined,
              ),
          );
          for (const arrival of arrivals) {
            await settle(2);
            land(arrival.pick % Math.max(1, out.length), arrival.refuse);
          }
          let settled = false;
          void Promise.all(results).then(() => (settled = true));
          while (!settled) {
            await settle(2);
            land(0, false);
          }
          const resolved = (await Promise.all(results)).flatMap((seqs) => seqs ?? []);
          expect(log).toEqual([...log].sort((a, b) => a - b));
          expect(resolved.filter((seq) => !log.includes(seq))).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });

  test('an append whose request failed resolves when a later request carried it with its ack, a flushed one never by a buffered', async () => {
    const holds: ((r: Response) => void)[] = [];
    const { stream: s, requests } = stream(() => new Promise((resolve) => holds.push(resolve)));
    const outcome = (p: Promise<unknown>) =>
      p.then(
        (r) => r,
        (err: unknown) => err,
      );
    const flushed = outcome(s.append('f', { ack: 'flushed' }));
    await settle();
    const first = outcome(s.append('b1'));
    await settle();
    const second = outcome(s.append('b2'));
    await settle();
    expect(requests.map((r) => [r.query.get('ack'), events(r).map((e) => e.seq)])).toEqual([
      ['flushed', [100]],
      ['buffered', [100, 101]],
      ['buffered', [100, 101, 102]],
    ]);
    // The last lands all three events; the two before it are refused.
    holds[2]?.(answer(3));
    await settle();
    holds[1]?.(problem(400, 'ValidationFailed'));
    holds[0]?.(problem(400, 'ValidationFailed'));
    expect(await second).toMatchObject({ seqs: [102], request: { accepted: 3 } });
    expect(await first).toMatchObject({ seqs: [101], request: { accepted: 3 } });
    expect(await flushed).toMatchObject({ code: 'ValidationFailed' });
  });

  test('without a producer id each writer gets its own, and seqs start at wall-clock microseconds', () => {
    const before = Date.now() * 1000;
    const one = stream(() => answer(1), {}).stream;
    const two = stream(() => answer(1), {}).stream;
    expect(one.producer).not.toBe(two.producer);
    expect(one.producer).toMatch(/^[\x21-\x7e]{1,128}$/);
    return one.append('x').then((r) => expect(r.seqs[0]).toBeGreaterThanOrEqual(before));
  });
});
