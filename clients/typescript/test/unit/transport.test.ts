import { TallyhoError } from '../../src/errors';
import { Transport } from '../../src/transport';
import { FakeClock, settle } from '../support/fakeClock';
import { fakeFetch, hang, json, problem } from '../support/fakeFetch';

const base = 'http://host.test/api';

function transport(handler: Parameters<typeof fakeFetch>[0], extra: Partial<ConstructorParameters<typeof Transport>[0]> = {}) {
  const clock = new FakeClock();
  const fake = fakeFetch(handler);
  const t = new Transport({
    baseUrl: base,
    fetch: fake.fetch,
    clock,
    random: () => 0.5,
    functionKey: 'fn-key',
    adminKey: 'admin-key',
    ...extra,
  });
  return { t, clock, requests: fake.requests };
}

describe('Transport', () => {
  test('keys go in the x-functions-key header, the admin key only on admin operations; JSON bodies carry their content type', async () => {
    const { t, requests } = transport(() => json(200, {}));
    await t.json({ method: 'POST', path: 'counters/a/increment', body: { by: 1 } });
    await t.json({ method: 'POST', path: 'gates/a/release', key: 'admin' });
    expect(requests[0]?.headers['x-functions-key']).toBe('fn-key');
    expect(requests[0]?.headers['content-type']).toBe('application/json');
    expect(requests[1]?.headers['x-functions-key']).toBe('admin-key');
    expect(requests.every((r) => !r.query.has('code'))).toBe(true);
  });

  test('a problem document becomes a TallyhoError with the server code, status and problem', async () => {
    const { t } = transport(() => problem(409, 'Conflict'));
    const error = await t.json({ method: 'PUT', path: 'sequences/a', body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TallyhoError);
    expect(error).toMatchObject({ code: 'Conflict', status: 409, request: 'PUT /sequences/a' });
    expect((error as TallyhoError).problem?.detail).toBe('Conflict happened');
  });

  // The same table as the .NET client's HttpTests: both clients take the app's address with or without /api.
  test.each([
    ['http://host.test', 'http://host.test/api/sequences/a'],
    ['http://host.test/', 'http://host.test/api/sequences/a'],
    ['http://host.test/api', 'http://host.test/api/sequences/a'],
    ['http://host.test/api/', 'http://host.test/api/sequences/a'],
    ['http://host.test/tallyho', 'http://host.test/tallyho/api/sequences/a'],
    ['http://host.test/tallyho/api/', 'http://host.test/tallyho/api/sequences/a'],
  ])('the base URL %s reaches %s', async (baseUrl, expected) => {
    const fake = fakeFetch(() => json(200, {}));
    await new Transport({ baseUrl, fetch: fake.fetch, clock: new FakeClock() }).json({ method: 'GET', path: 'sequences/a' });
    expect(fake.requests[0]?.url).toBe(expected);
  });

  test('a base URL with a query is refused at construction', () => {
    expect(() => new Transport({ baseUrl: 'http://host.test/api?code=x' })).toThrow(/query or fragment/);
  });

  test('an error names the whole URL tried, so a wrong base URL shows in its first error', async () => {
    const { t } = transport(() => new Response('Not Found', { status: 404 }));
    const error = (await t.json({ method: 'GET', path: 'sequences/a' }).catch((e: unknown) => e)) as TallyhoError;
    expect(error).toMatchObject({ code: 'NotFound', status: 404, request: 'GET /sequences/a' });
    expect(error.message).toBe('GET http://host.test/api/sequences/a: Not Found');
  });

  test('429 and 503 are retried after Retry-After, capped by maxDelayMs', async () => {
    const { t, clock, requests } = transport(
      (_r, i) =>
        i === 0
          ? problem(429, 'TooManyRequests', { 'retry-after': '3' })
          : i === 1
            ? problem(503, 'DependencyUnavailable', { 'retry-after': '60' })
            : json(200, { ok: true }),
      { retry: { maxDelayMs: 5000 } },
    );
    const done = t.json<{ ok: boolean }>({ method: 'POST', path: 'counters/a/increment', body: {} });
    await clock.advance(3000);
    expect(requests).toHaveLength(2);
    await clock.advance(5000);
    await expect(done).resolves.toMatchObject({ status: 200, body: { ok: true } });
    expect(requests).toHaveLength(3);
    expect(clock.sleeps.filter((ms) => ms !== 30_000)).toEqual([3000, 5000]);
  });

  test('retries stop at the bound and the last error is thrown', async () => {
    const { t, clock, requests } = transport(() => problem(503, 'DependencyUnavailable', { 'retry-after': '1' }), {
      retry: { retries: 2 },
    });
    const done = t.json({ method: 'GET', path: 'gates/a' }).catch((e: unknown) => e);
    await clock.advance(10_000);
    expect(await done).toMatchObject({ code: 'DependencyUnavailable', status: 503 });
    expect(requests).toHaveLength(3);
  });

  test('network failures are retried with jittered back-off only when the request is safe to repeat', async () => {
    let calls = 0;
    const { t, clock } = transport(() => {
      calls++;
      throw new TypeError('socket hang up');
    });
    const unsafe = t.json({ method: 'POST', path: 'schedules/a/trigger' }).catch((e: unknown) => e);
    expect(await unsafe).toMatchObject({ code: 'Network' });
    expect(calls).toBe(1);

    const safe = t.json({ method: 'GET', path: 'gates/a' }).catch((e: unknown) => e);
    await clock.advance(60_000);
    expect(await safe).toMatchObject({ code: 'Network' });
    expect(calls).toBe(1 + 5);
    // Equal jitter with random() = 0.5: three quarters of 200, 400, 800, 1600 ms.
    expect(clock.sleeps.filter((ms) => ms !== 30_000)).toEqual([150, 300, 600, 1200]);
  });

  test('an attempt that gets no answer times out on the clock and is retried when idempotent', async () => {
    const { t, clock, requests } = transport((r, i) => (i === 0 ? hang(r.signal) : json(200, { n: 1 })), { timeoutMs: 1000 });
    const done = t.json({ method: 'POST', path: 'sequences/a/next', body: { count: 1 }, idempotencyKey: 'k1' });
    await clock.advance(999);
    expect(requests).toHaveLength(1);
    await clock.advance(1 + 150);
    await expect(done).resolves.toMatchObject({ body: { n: 1 } });
    expect(requests.map((r) => r.headers['idempotency-key'])).toEqual(['k1', 'k1']);
  });

  test("the caller's AbortSignal stops a request and its retries at once", async () => {
    const { t, requests } = transport((r) => hang(r.signal));
    const controller = new AbortController();
    const done = t.json({ method: 'GET', path: 'gates/a', signal: controller.signal }).catch((e: unknown) => e);
    await settle();
    controller.abort(new Error('user left'));
    expect(await done).toMatchObject({ message: 'user left' });
    expect(requests).toHaveLength(1);
  });
});
