/**
 * The shared route machinery against what the real Functions host hands a function in stream mode
 * (devhost/docs/real-host.md#binding-data): `request.params` carries the route values plus
 * every query value except `code` plus the top-level primitive fields of a JSON body, in a
 * case-insensitive dictionary; and `?code=` is the host's key (security finding 8).
 */
import * as z from 'zod';

import { defineRoute, type RequestLike } from '../../../shared/http/route';

function request(url: string, params: Record<string, string>, body = ''): RequestLike {
  const parsed = new URL(url, 'http://localhost');
  return {
    method: 'POST',
    url: parsed.href,
    headers: { get: (name) => (name.toLowerCase() === 'content-type' && body !== '' ? 'application/json' : null) },
    params,
    query: parsed.searchParams,
    text: () => Promise.resolve(body),
  };
}

const seen: unknown[] = [];
const route = defineRoute({
  // A name from the authorization table (every route must have one); the probe stands in for it.
  name: 'streamsAppend',
  method: 'POST',
  path: 'streams/{type}/events',
  summary: 'probe',
  tags: [],
  responses: {},
  params: z.strictObject({ type: z.string() }),
  query: z.strictObject({ ack: z.enum(['buffered', 'flushed']).default('buffered') }),
  body: z.strictObject({ producer: z.string(), seq: z.number() }),
  handle: (input) => {
    seen.push({ params: input.params, query: input.query, body: input.body });
    return Promise.resolve({ status: 204 });
  },
});

beforeEach(() => {
  seen.length = 0;
});

test('real host §1: query values and body fields in params do not reach a strict params schema', async () => {
  const body = '{"producer":"p","seq":3}';
  const params = { type: 'orders', ack: 'flushed', producer: 'p', seq: '3' };
  expect((await route.run(request('/api/streams/orders/events?ack=flushed', params, body))).status).toBe(204);
  expect(seen).toEqual([{ params: { type: 'orders' }, query: { ack: 'flushed' }, body: { producer: 'p', seq: 3 } }]);
});

test('real host §1: a route value is found whatever the case of its key (the host keeps a clashing query name’s spelling)', async () => {
  expect((await route.run(request('/api/streams/orders/events', { TYPE: 'orders' }, '{"producer":"p","seq":1}'))).status).toBe(204);
  expect(seen).toEqual([expect.objectContaining({ params: { type: 'orders' } })]);
});

test('?code= is accepted on every route (a strict query schema never sees the host key)', async () => {
  for (const code of ['code', 'CODE']) {
    const res = await route.run(
      request(`/api/streams/orders/events?${code}=k&ack=flushed`, { type: 'orders' }, '{"producer":"p","seq":1}'),
    );
    expect(res.status).toBe(204);
  }
  expect(seen).toEqual([expect.objectContaining({ query: { ack: 'flushed' } }), expect.objectContaining({ query: { ack: 'flushed' } })]);
});

test('an unknown query key is still refused with problem+json', async () => {
  const res = await route.run(request('/api/streams/orders/events?limit=5', { type: 'orders', limit: '5' }, '{"producer":"p","seq":1}'));
  expect(res.status).toBe(400);
  expect(res.headers?.['content-type']).toMatch(/^application\/problem\+json/);
  expect(seen).toEqual([]);
});
