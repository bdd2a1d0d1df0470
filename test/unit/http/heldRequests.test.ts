/**
 * Long polls and event streams are places among TALLYHO_HTTP_MAX_HELD, fair shares by caller
 * (shared/http/held.ts): one caller opening more than its quarter ends its own oldest, a newcomer to
 * a full instance ends the largest holder's oldest, nobody is refused, and a place comes back when
 * the answer (or the streamed body) ends.
 */
import { HeldRequests } from '../../../shared/http/held';
import { defineRoute, type RequestLike } from '../../../shared/http/route';
import type { Caller } from '../../../shared/identity/caller';
import type { CallerResolver } from '../../../shared/identity/resolve';

const callerNamed = (id: string): Caller => ({ id, kind: 'credential', roles: { admin: false, submitter: true, workerOf: [] } });
const callers = (): CallerResolver => ({ resolve: (headers) => Promise.resolve(callerNamed(headers.get('x-who') ?? 'nobody')) });

function request(who: string): RequestLike {
  return {
    method: 'GET',
    url: 'http://localhost/api/gates/g/wait',
    headers: { get: (name) => (name === 'x-who' ? who : null) },
    params: { name: 'g' },
    query: new URLSearchParams(),
    text: () => Promise.resolve(''),
  };
}

/** A long poll that answers 200 when its signal fires ("not yet"), never otherwise. */
const longPoll = defineRoute({
  name: 'gatesWait',
  method: 'GET',
  path: 'gates/{name}/wait',
  holds: true,
  summary: 'probe',
  tags: [],
  responses: {},
  handle: ({ clientGone }) =>
    new Promise((resolve) => clientGone.addEventListener('abort', () => resolve({ status: 200, jsonBody: { timedOut: true } }))),
});

/** An event stream that stays open until it is cancelled. */
const events = defineRoute({
  name: 'gatesEvents',
  method: 'GET',
  path: 'gates/{name}/events',
  holds: true,
  summary: 'probe',
  tags: [],
  responses: {},
  handle: () => Promise.resolve({ status: 200, body: new ReadableStream<Uint8Array>({ pull: () => new Promise(() => undefined) }) }),
});

test("one caller opening more than its quarter of the held requests ends its own oldest, and another caller's request is still held", async () => {
  const held = new HeldRequests(() => 8);
  const options = { callers, held: () => held };
  const ended: number[] = [];
  const mine = [0, 1, 2].map((i) => longPoll.run(request('a'), options).then((r) => (ended.push(i), r)));
  await expect(mine[0]).resolves.toMatchObject({ status: 200 });
  expect(ended).toEqual([0]);
  void longPoll.run(request('b'), options);
  await new Promise((resolve) => setImmediate(resolve));
  expect(held.held('a')).toBe(2);
  expect(held.held('b')).toBe(1);
});

test("a newcomer to a full instance is held, and the largest holder's oldest request ends as at its timeout", async () => {
  const held = new HeldRequests(() => 4);
  const options = { callers, held: () => held };
  const first = longPoll.run(request('a'), options);
  void longPoll.run(request('b'), options);
  void longPoll.run(request('c'), options);
  void longPoll.run(request('d'), options);
  void longPoll.run(request('e'), options);
  await expect(first).resolves.toMatchObject({ status: 200, jsonBody: { timedOut: true } });
  expect(held.held()).toBe(4);
  expect(held.held('e')).toBe(1);
});

test('an event stream holds its place until its body ends, not only until its handler returns', async () => {
  const held = new HeldRequests(() => 4);
  const answer = await events.run(request('a'), { callers, held: () => held });
  expect(held.held('a')).toBe(1);
  await (answer.body as ReadableStream<Uint8Array>).cancel();
  expect(held.held('a')).toBe(0);
});
