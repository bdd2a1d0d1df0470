import { countersRoutes } from '../../../shared/counters/routes';
import { problemContentType } from '../../../shared/errors';
import { callRoute, routeNamed } from '../../support/routeRequest';
import { counterHarness } from '../../support/counters';

describe('counter HTTP handlers (Azurite)', () => {
  const h = counterHarness({ settings: { maxIncrement: 1000 } });
  const routes = countersRoutes({ service: () => h.service });
  const configure = routeNamed(routes, 'countersConfigure');
  const increment = routeNamed(routes, 'countersIncrement');
  const get = routeNamed(routes, 'countersGet');

  beforeAll(async () => {
    expect((await callRoute(configure, { params: { name: 'views' }, body: { partitions: 2, safetyWindowSeconds: 30 } })).status).toBe(201);
  });

  it('creates (201), confirms (200) and reads a counter; increments answer 202', async () => {
    const again = await callRoute(configure, { params: { name: 'views' }, body: { partitions: 2, safetyWindowSeconds: 30 } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ name: 'views', mode: 'hits', partitions: 2, safetyWindowSeconds: 30 });
    expect(await callRoute(increment, { params: { name: 'views' } })).toMatchObject({ status: 202, body: { name: 'views', by: 1 } });
    expect((await callRoute(increment, { params: { name: 'views' }, body: { by: -1 } })).status).toBe(202);
    const keyed = { params: { name: 'views' }, body: { by: 5 }, headers: { 'Idempotency-Key': 'order-77' } };
    expect((await callRoute(increment, keyed)).headers['idempotent-replayed']).toBeUndefined();
    expect((await callRoute(increment, keyed)).headers['idempotent-replayed']).toBe('true');
    const read = await callRoute(get, { params: { name: 'views' } });
    expect(read).toMatchObject({ status: 200, body: { name: 'views', value: 5, pendingHits: 3, watermark: null, consistent: false } });
    expect((await callRoute(get, { params: { name: 'views' }, query: { consistent: 'true' } })).body).toMatchObject({
      value: 5,
      consistent: true,
    });
  });

  it('answers 409 problem+json for a structural change of a counter with data, and for a key reused with another amount', async () => {
    const changed = await callRoute(configure, { params: { name: 'views' }, body: { mode: 'sharded', partitions: 2 } });
    expect(changed.status).toBe(409);
    expect(changed.headers['content-type']).toBe(problemContentType);
    expect(changed.body).toMatchObject({ code: 'Conflict', fields: ['mode'] });
    const reused = await callRoute(increment, { params: { name: 'views' }, body: { by: 6 }, headers: { 'Idempotency-Key': 'order-77' } });
    expect(reused).toMatchObject({ status: 409, body: { code: 'Conflict', firstBy: 5 } });
  });

  it('answers 404 problem+json for an unknown counter and writes nothing', async () => {
    const before = await h.rows('data');
    const missing = await callRoute(increment, { params: { name: 'ghost' } });
    expect(missing).toMatchObject({ status: 404, body: { code: 'NotFound' } });
    expect((await callRoute(get, { params: { name: 'ghost' } })).status).toBe(404);
    expect(await h.rows('data')).toEqual(before);
  });

  const badIncrements: [string, Parameters<typeof callRoute>[1], string][] = [
    ['a fractional by', { params: { name: 'views' }, body: { by: 2.5 } }, 'body.by'],
    ['a string by', { params: { name: 'views' }, body: { by: '3' } }, 'body.by'],
    ['by = 0', { params: { name: 'views' }, body: { by: 0 } }, 'body.by'],
    ['by above the setting', { params: { name: 'views' }, body: { by: 1001 } }, 'body.by'],
    ['by below the setting', { params: { name: 'views' }, body: { by: -1001 } }, 'body.by'],
    ['by above the hard ceiling', { params: { name: 'views' }, body: { by: 1e12 } }, 'body.by'],
    ['an unknown field', { params: { name: 'views' }, body: { by: 1, bye: 2 } }, 'body'],
    ['a JSON array', { params: { name: 'views' }, body: [1] }, 'body'],
    ['malformed JSON', { params: { name: 'views' }, body: '{"by": 1' }, 'body'],
    ['a bad name', { params: { name: 'bad name!' } }, 'params.name'],
    ['a name of 64 characters', { params: { name: 'x'.repeat(64) } }, 'params.name'],
    ['a name starting with a dot', { params: { name: '.hidden' } }, 'params.name'],
    ['a bad Idempotency-Key', { params: { name: 'views' }, headers: { 'Idempotency-Key': 'has spaces' } }, 'headers.Idempotency-Key'],
  ];

  it.each(badIncrements)(
    'refuses an increment with %s: 400 problem+json naming the field, nothing written',
    async (_what, request, path) => {
      const before = [await h.rows('data'), await h.rows('dirty'), await h.rows('settings')];
      const response = await callRoute<{ code: string; issues: { path: string }[] }>(increment, request);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toBe(problemContentType);
      expect(response.body.code).toBe('ValidationFailed');
      expect(response.body.issues.map((i) => i.path)).toContainEqual(expect.stringMatching(new RegExp(`^${path.replace(/[.]/g, '\\.')}`)));
      expect([await h.rows('data'), await h.rows('dirty'), await h.rows('settings')]).toEqual(before);
    },
  );

  it('refuses an oversized increment body with 413 problem+json, nothing written', async () => {
    const before = await h.rows('data');
    const response = await callRoute(increment, { params: { name: 'views' }, body: { by: 1, pad: 'x'.repeat(2000) } });
    expect(response).toMatchObject({ status: 413, body: { code: 'PayloadTooLarge' } });
    expect(response.headers['content-type']).toBe(problemContentType);
    expect(await h.rows('data')).toEqual(before);
  });

  const badSettings: [string, Parameters<typeof callRoute>[1], string][] = [
    ['no body', { params: { name: 'fresh' } }, 'body'],
    ['an unknown mode', { params: { name: 'fresh' }, body: { mode: 'fast' } }, 'body.mode'],
    ['0 partitions', { params: { name: 'fresh' }, body: { partitions: 0 } }, 'body.partitions'],
    ['101 partitions', { params: { name: 'fresh' }, body: { partitions: 101 } }, 'body.partitions'],
    ['fractional partitions', { params: { name: 'fresh' }, body: { partitions: 2.5 } }, 'body.partitions'],
    ['a negative safety window', { params: { name: 'fresh' }, body: { safetyWindowSeconds: -1 } }, 'body.safetyWindowSeconds'],
    ['a safety window given as a string', { params: { name: 'fresh' }, body: { safetyWindowSeconds: '60' } }, 'body.safetyWindowSeconds'],
    ['a misspelt field', { params: { name: 'fresh' }, body: { partition: 2 } }, 'body'],
    ['malformed JSON', { params: { name: 'fresh' }, body: '{mode: hits}' }, 'body'],
    ['a bad name', { params: { name: 'a|b' }, body: {} }, 'params.name'],
  ];

  it.each(badSettings)('refuses a PUT with %s: 400 problem+json, nothing written', async (_what, request, path) => {
    const before = await h.rows('settings');
    const response = await callRoute<{ code: string; issues: { path: string }[] }>(configure, request);
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe(problemContentType);
    expect(response.body.issues.map((i) => i.path)).toContainEqual(expect.stringMatching(new RegExp(`^${path.replace(/[.]/g, '\\.')}`)));
    expect(await h.rows('settings')).toEqual(before);
  });

  it('refuses a read with a bad consistent flag', async () => {
    const response = await callRoute(get, { params: { name: 'views' }, query: { consistent: 'yes' } });
    expect(response).toMatchObject({ status: 400, body: { code: 'ValidationFailed' } });
  });
});
