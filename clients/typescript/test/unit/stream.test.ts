import { Stream } from '../../src/stream';
import { settle } from '../support/fakeClock';
import { fakeTransport } from '../support/fakeTransport';
import { type Handler, json } from '../support/fakeFetch';

interface SentEvent {
  producer: string;
  seq: number;
  data: unknown;
}

function stream(handler: Handler, options: ConstructorParameters<typeof Stream>[2] = { producer: 'p1', firstSeq: 100 }) {
  const { transport, clock, requests } = fakeTransport(handler);
  return { stream: new Stream(transport, 'orders', options), clock, requests };
}

const events = (r: { body: unknown }) => (r.body as { events: SentEvent[] }).events;
const answer = (accepted: number) => json(202, { type: 'orders', accepted, duplicates: 0, lastIndex: 0, ack: 'buffered', flushed: false });

describe('Stream', () => {
  test('an append aborted while it waits behind a request is withdrawn; the others go on in order', async () => {
    const releases: (() => void)[] = [];
    const { stream: s, requests } = stream(() => new Promise((resolve) => releases.push(() => resolve(answer(1)))));
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

  test('only one request is in flight; appends made meanwhile go together in the next, with the same ack', async () => {
    const holds: (() => void)[] = [];
    const { stream: s, requests } = stream(() => new Promise((resolve) => holds.push(() => resolve(answer(1)))));
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

  test('without a producer id each writer gets its own, and seqs start at wall-clock microseconds', () => {
    const before = Date.now() * 1000;
    const one = stream(() => answer(1), {}).stream;
    const two = stream(() => answer(1), {}).stream;
    expect(one.producer).not.toBe(two.producer);
    expect(one.producer).toMatch(/^[\x21-\x7e]{1,128}$/);
    return one.append('x').then((r) => expect(r.seqs[0]).toBeGreaterThanOrEqual(before));
  });
});
