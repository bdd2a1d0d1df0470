import { CachedGateReleases, type ReleaseFallback } from '../../src/releases';
import { TestGateReleases } from '../../src/testing';
import { type Handler, json, problem } from '../support/fakeFetch';
import { fakeTransport } from '../support/fakeTransport';

const gate = (state: 'closed' | 'released') => ({ name: 'launch', state, generation: 1 });

function releases(handler: Handler, cacheMs = 1000) {
  const { transport, clock, requests } = fakeTransport(handler);
  const fallbacks: ReleaseFallback[] = [];
  const cache = new CachedGateReleases(transport, { cacheMs, timeoutMs: 500, onFallback: (f) => fallbacks.push(f) });
  return { cache, clock, requests, fallbacks };
}

describe('CachedGateReleases', () => {
  test('answers from the cache until cacheMs has passed, then revalidates with If-None-Match', async () => {
    let state: 'closed' | 'released' = 'closed';
    const { cache, clock, requests, fallbacks } = releases((r) =>
      r.headers['if-none-match'] === `"${state}"` ? new Response(null, { status: 304 }) : json(200, gate(state), { etag: `"${state}"` }),
    );
    expect(await cache.isReleased('launch', { default: true })).toBe(false);
    state = 'released';
    await clock.advance(999);
    expect(await cache.isReleased('launch', { default: true })).toBe(false);
    expect(requests).toHaveLength(1);
    await clock.advance(1);
    expect(await cache.isReleased('launch', { default: false })).toBe(true);
    await clock.advance(1000);
    expect(await cache.isReleased('launch', { default: false })).toBe(true);
    expect(requests.map((r) => r.headers['if-none-match'])).toEqual([undefined, '"closed"', '"released"']);
    expect(fallbacks).toEqual([]);
  });

  test('concurrent checks of one gate share one request', async () => {
    const { cache, requests } = releases(() => json(200, gate('released')));
    const answers = await Promise.all(Array.from({ length: 10 }, () => cache.isReleased('launch', { default: false })));
    expect(answers).toEqual(Array(10).fill(true));
    expect(requests).toHaveLength(1);
  });

  test('unreachable with nothing seen: the default, reported, and the failure is cached for cacheMs', async () => {
    const { cache, clock, requests, fallbacks } = releases(() => {
      throw new TypeError('connect ECONNREFUSED');
    });
    expect(await cache.isReleased('launch', { default: true })).toBe(true);
    expect(await cache.isReleased('launch', { default: false })).toBe(false);
    expect(requests).toHaveLength(1);
    expect(fallbacks.map((f) => [f.source, f.answer])).toEqual([
      ['default', true],
      ['default', false],
    ]);
    expect(fallbacks[0]?.error).toMatchObject({ name: 'TallyhoError', code: 'Network' });
    await clock.advance(1000);
    await cache.isReleased('launch', { default: false });
    expect(requests).toHaveLength(2);
  });

  test('a failure after a state was seen answers the last known state, reported as such', async () => {
    let up = true;
    const { cache, clock, fallbacks } = releases(() => (up ? json(200, gate('released')) : problem(503, 'DependencyUnavailable')));
    expect(await cache.isReleased('launch', { default: false })).toBe(true);
    up = false;
    await clock.advance(1000);
    expect(await cache.isReleased('launch', { default: false })).toBe(true);
    expect(fallbacks).toMatchObject([{ gate: 'launch', source: 'lastKnown', answer: true, error: { code: 'DependencyUnavailable' } }]);
  });

  test('no such gate answers the default; a hung read times out into the default', async () => {
    const { cache, clock, fallbacks } = releases((r) =>
      r.path.endsWith('missing')
        ? problem(404, 'NotFound')
        : new Promise((_resolve, reject) => r.signal?.addEventListener('abort', () => reject(r.signal?.reason as Error))),
    );
    expect(await cache.isReleased('missing', { default: false })).toBe(false);
    const hung = cache.isReleased('hung', { default: true });
    await clock.advance(500);
    expect(await hung).toBe(true);
    expect(fallbacks.map((f) => (f.error as { code?: string }).code)).toEqual(['NotFound', 'Timeout']);
  });

  test("the caller's abort rejects that call; the read goes on and serves the next one", async () => {
    let answer: () => void = () => undefined;
    const { cache, requests } = releases(() => new Promise((resolve) => (answer = () => resolve(json(200, gate('released'))))));
    const controller = new AbortController();
    const aborted = cache.isReleased('launch', { default: false, abortSignal: controller.signal });
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    const next = cache.isReleased('launch', { default: false });
    answer();
    expect(await next).toBe(true);
    expect(requests).toHaveLength(1);
  });
});

describe('TestGateReleases', () => {
  test('answers the states the test sets, and the default (recorded) for gates it never set or made unreachable', async () => {
    const gates = new TestGateReleases({ launch: true });
    expect(await gates.isReleased('launch', { default: false })).toBe(true);
    gates.close('launch');
    expect(await gates.isReleased('launch', { default: true })).toBe(false);
    expect(await gates.isReleased('other', { default: true })).toBe(true);
    gates.release('other').unreachable('launch');
    expect(await gates.isReleased('other', { default: false })).toBe(true);
    expect(await gates.isReleased('launch', { default: true })).toBe(true);
    expect(gates.fallbacks.map((f) => [f.gate, f.answer])).toEqual([
      ['other', true],
      ['launch', true],
    ]);
    await expect(gates.isReleased('launch', { default: true, abortSignal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});
