import { type CounterOptions, Counters } from '../../src/counters';
import { settle } from '../support/fakeClock';
import { fakeTransport } from '../support/fakeTransport';
import { type Handler, json, problem } from '../support/fakeFetch';

/** Counters that send at the end of each turn (lingerMs 0) unless the test asks for a linger. */
function counters(handler: Handler, options: CounterOptions = {}) {
  const { transport, clock, requests } = fakeTransport(handler);
  return { counters: new Counters(transport, { lingerMs: 0, ...options }), clock, requests };
}

/** Holds each answer until the test lets it go, so increments pile up behind a request in flight. */
function heldServer() {
  const releases: (() => void)[] = [];
  const handler: Handler = (request) =>
    new Promise((resolve) => releases.push(() => resolve(json(202, { name: 'hits', by: (request.body as { by: number }).by }))));
  return { handler, answerNext: () => releases.shift()?.() };
}

const bodies = (requests: { body: unknown }[]) => requests.map((r) => (r.body as { by: number }).by);

describe('Counters', () => {
  test('with one request in flight, increments made meanwhile go out as one request with their sum', async () => {
    const server = heldServer();
    const { counters: c, requests } = counters(server.handler, { maxInFlight: 1 });
    const first = c.increment('hits');
    await settle();
    const rest = Array.from({ length: 100 }, (_, i) => c.increment('hits', i % 2 === 0 ? 2 : -1));
    await settle();
    expect(requests).toHaveLength(1);
    server.answerNext();
    await first;
    await settle();
    expect(bodies(requests)).toEqual([1, 50]);
    server.answerNext();
    await Promise.all(rest);
    expect(c.stats()).toEqual({ increments: 101, requests: 2 });
  });

  test('by default up to four requests are in flight per counter, then the waiting batch grows', async () => {
    const server = heldServer();
    const { counters: c, requests } = counters(server.handler);
    const done: Promise<void>[] = [];
    for (let i = 0; i < 6; i++) {
      done.push(c.increment('hits', i + 1));
      await settle();
    }
    done.push(c.increment('hits', 10));
    await settle();
    expect(bodies(requests)).toEqual([1, 2, 3, 4]);
    server.answerNext();
    await settle();
    expect(bodies(requests)).toEqual([1, 2, 3, 4, 5 + 6 + 10]);
    for (let i = 0; i < 4; i++) server.answerNext();
    await Promise.all(done);
    expect(c.stats()).toEqual({ increments: 7, requests: 5 });
  });

  test('by default an increment lingers 5 ms for others to share its request', async () => {
    const { transport, clock, requests } = fakeTransport(() => json(202, {}));
    const c = new Counters(transport);
    const done = [c.increment('hits', 1)];
    await clock.advance(3);
    done.push(c.increment('hits', 2));
    await settle();
    expect(requests).toHaveLength(0);
    await clock.advance(2);
    await Promise.all(done);
    expect(bodies(requests)).toEqual([3]);
    done.push(c.increment('hits', 4));
    await c.flush();
    expect(bodies(requests)).toEqual([3, 4]);
    expect(clock.now()).toBe(5);
  });

  test('increments that cancel out in one batch send nothing', async () => {
    const { counters: c, requests } = counters(() => json(202, {}));
    await Promise.all([c.increment('hits', 3), c.increment('hits', -3)]);
    expect(requests).toHaveLength(0);
  });

  test('each batch has its own Idempotency-Key and its retries reuse it', async () => {
    let calls = 0;
    const {
      counters: c,
      clock,
      requests,
    } = counters(() => {
      calls++;
      if (calls === 1) throw new TypeError('response lost');
      return json(202, {});
    });
    const done = c.increment('hits', 5);
    await clock.advance(1000);
    await done;
    await c.increment('hits', 1);
    const keys = requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toBeDefined();
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
    expect(bodies(requests)).toEqual([5, 5, 1]);
  });

  test('counters coalesce separately, and a failed batch rejects exactly its own increments', async () => {
    const { counters: c, requests } = counters((request) => (request.path.includes('bad') ? problem(404, 'NotFound') : json(202, {})));
    const good = c.increment('good', 3);
    const bad = c.increment('bad', 1);
    await expect(good).resolves.toBeUndefined();
    await expect(bad).rejects.toMatchObject({ code: 'NotFound', status: 404 });
    expect(requests.map((r) => r.path).sort()).toEqual(['counters/bad/increment', 'counters/good/increment']);
  });

  test('flush() waits for every pending batch; close() drains and then refuses', async () => {
    const server = heldServer();
    const { counters: c, requests } = counters(server.handler);
    void c.increment('a');
    await settle();
    void c.increment('a', 4);
    let flushed = false;
    const flushing = c.flush().then(() => (flushed = true));
    server.answerNext();
    await settle();
    expect(flushed).toBe(false);
    server.answerNext();
    await flushing;
    expect(bodies(requests)).toEqual([1, 4]);
    await c.close();
    await expect(c.increment('a')).rejects.toMatchObject({ code: 'Closed' });
  });

  test("a sum that would pass the server's default limit (1,000,000, TALLYHO_COUNTERS_MAX_INCREMENT) starts a new batch", async () => {
    const server = heldServer();
    const { counters: c, requests } = counters(server.handler);
    const all = [c.increment('a', 1)];
    await settle();
    all.push(c.increment('a', 600_000), c.increment('a', 600_000));
    for (let i = 0; i < 3; i++) {
      server.answerNext();
      await settle();
    }
    await Promise.all(all);
    expect(bodies(requests)).toEqual([1, 600_000, 600_000]);
    await expect(c.increment('a', 1_000_001)).rejects.toThrow(RangeError);
  });

  test('maxBatch raises the bound for a server allowed more, up to maxIncrement', async () => {
    const server = heldServer();
    const { counters: c, requests } = counters(server.handler, { maxBatch: 2_000_000_000 });
    const all = [c.increment('a', 1)];
    await settle();
    all.push(c.increment('a', 600_000), c.increment('a', 600_000), c.increment('a', 600_000_000), c.increment('a', 600_000_000));
    for (let i = 0; i < 3; i++) {
      server.answerNext();
      await settle();
    }
    await Promise.all(all);
    expect(bodies(requests)).toEqual([1, 601_200_000, 600_000_000]);
  });

  test('get() passes consistent=true only when asked', async () => {
    const { counters: c, requests } = counters(() => json(200, { name: 'a', value: 3 }));
    await c.get('a');
    await c.get('a', { consistent: true });
    expect(requests.map((r) => r.query.get('consistent'))).toEqual([null, 'true']);
  });
});
