/**
 * A credential's token is sent as `Authorization: Bearer …`, fetched once and reused, refreshed before
 * it expires by the rules of @azure/core-rest-pipeline's bearer-token policy (src/auth.ts), with one
 * refresh shared by every caller waiting. Time is the fake clock's: nothing here sleeps.
 */
import type { TokenCredential as AzureTokenCredential } from '@azure/core-auth';
import type { DefaultAzureCredential } from '@azure/identity';

import type { AccessToken, GetTokenOptions, TokenCredential } from '../../src/auth';
import { TallyhoClient } from '../../src/client';
import { isTallyhoError } from '../../src/errors';
import { FakeClock, settle } from '../support/fakeClock';
import { fakeFetch, json } from '../support/fakeFetch';
import { fakeTransport } from '../support/fakeTransport';

// The shapes fit both ways: any credential of @azure/identity is a TokenCredential here, and ours is theirs.
type Fits<A, B> = A extends B ? true : false;
const fits: [
  Fits<AzureTokenCredential, TokenCredential>,
  Fits<DefaultAzureCredential, TokenCredential>,
  Fits<TokenCredential, AzureTokenCredential>,
] = [true, true, true];

const minute = 60_000;
const hour = 60 * minute;
// The figures of @azure/core-rest-pipeline's token cycler (DEFAULT_CYCLER_OPTIONS, 1.24), pinned here as numbers.
const refreshWindow = 2 * minute;
const forcedWindow = 1_000;

/** A fake TokenCredential: counts its calls, hands out `token-1`, `token-2`, … valid for an hour, or what the test scripts. */
class FakeTokenCredential implements TokenCredential {
  readonly calls: { scopes: string[]; options: GetTokenOptions | undefined }[] = [];
  /** What the next calls do, in order; when empty, a fresh token valid for `lifetimeMs`. */
  readonly script: (() => Promise<AccessToken | null>)[] = [];
  private issued = 0;

  constructor(
    private readonly clock: FakeClock,
    private readonly lifetimeMs = hour,
  ) {}

  getToken(scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken | null> {
    this.calls.push({ scopes: typeof scopes === 'string' ? [scopes] : scopes, options });
    const next = this.script.shift();
    if (next !== undefined) return next();
    this.issued++;
    return Promise.resolve({ token: `token-${this.issued}`, expiresOnTimestamp: this.clock.now() + this.lifetimeMs });
  }
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function setup(lifetimeMs = hour) {
  const clock = new FakeClock();
  const credential = new FakeTokenCredential(clock, lifetimeMs);
  const { transport, requests } = fakeTransport(() => json(200, {}), {
    baseUrl: 'https://tallyho.example.net',
    clock,
    credential,
    audience: 'api://tallyho-app',
  });
  const call = () => transport.json({ method: 'GET', path: 'counters/c' });
  const sent = () => requests.map((r) => r.headers.authorization);
  return { clock, credential, transport, call, sent, requests };
}

test('the type checks above hold', () => {
  expect(fits).toEqual([true, true, true]);
});

test("the token goes as Authorization: Bearer, asked once for the audience's .default scope and reused", async () => {
  const { credential, call, sent, clock } = setup();
  for (let i = 0; i < 5; i++) {
    await call();
    await clock.advance(5 * minute);
  }
  expect(sent()).toEqual(Array(5).fill('Bearer token-1'));
  expect(credential.calls).toEqual([{ scopes: ['api://tallyho-app/.default'], options: undefined }]);
});

test('within 2 minutes of expiry a refresh starts in the background; the request in hand goes with the old token', async () => {
  const { credential, call, sent, clock } = setup();
  await call();
  await clock.advance(hour - refreshWindow - 1);
  await call();
  expect(credential.calls).toHaveLength(1);
  await clock.advance(2);
  await call(); // 1 ms inside the window
  await settle();
  await call();
  expect(sent()).toEqual(['Bearer token-1', 'Bearer token-1', 'Bearer token-1', 'Bearer token-2']);
  expect(credential.calls).toHaveLength(2);
});

test('concurrent requests with no token wait for one refresh, shared', async () => {
  const { credential, call, sent } = setup();
  const pending = deferred<AccessToken | null>();
  credential.script.push(() => pending.promise);
  const calls = Array.from({ length: 10 }, () => call());
  await settle();
  expect(credential.calls).toHaveLength(1);
  pending.resolve({ token: 'shared', expiresOnTimestamp: hour });
  await Promise.all(calls);
  expect(sent()).toEqual(Array(10).fill('Bearer shared'));
  expect(credential.calls).toHaveLength(1);
});

test('concurrent requests inside the refresh window start one background refresh between them', async () => {
  const { credential, call, sent, clock } = setup();
  await call();
  await clock.advance(hour - minute);
  const pending = deferred<AccessToken | null>();
  credential.script.push(() => pending.promise);
  await Promise.all(Array.from({ length: 10 }, () => call()));
  expect(credential.calls).toHaveLength(2);
  pending.resolve({ token: 'next', expiresOnTimestamp: clock.now() + hour });
  await settle();
  await call();
  expect(sent().slice(1)).toEqual([...Array(10).fill('Bearer token-1'), 'Bearer next']);
});

test('a token within 1 s of expiry is not sent: callers wait for the refresh', async () => {
  const { credential, call, sent, clock } = setup();
  await call();
  await clock.advance(hour - forcedWindow + 1);
  await call();
  expect(sent()).toEqual(['Bearer token-1', 'Bearer token-2']);
  expect(credential.calls).toHaveLength(2);
});

test('a failed background refresh is tried again every 3 s while the token lasts; at expiry its failure reaches the caller', async () => {
  const { credential, call, sent, clock } = setup();
  await call();
  await clock.advance(hour - minute);
  for (let i = 0; i < 25; i++) credential.script.push(() => Promise.reject(new Error('IMDS is down')));
  await call();
  await clock.advance(30_000);
  expect(credential.calls.length).toBe(1 + 1 + 10); // the first fetch, the try at the window, one per 3 s
  await call();
  expect(sent()).toEqual(Array(3).fill('Bearer token-1'));
  await clock.advance(minute);
  const error = await call().catch((e: unknown) => e);
  expect(isTallyhoError(error, 'Credential')).toBe(true);
  expect((error as Error).message).toMatch(/IMDS is down/);
  expect((error as Error).cause).toBeInstanceOf(Error);
  // The next call starts afresh.
  credential.script.length = 0;
  await call();
  expect(sent().at(-1)).toBe('Bearer token-2');
});

test('a refresh that fails with no token in hand fails its callers once; it is not retried as a network error', async () => {
  const { credential, call, requests } = setup();
  credential.script.push(() => Promise.resolve(null));
  const error = await call().catch((e: unknown) => e);
  expect(isTallyhoError(error, 'Credential')).toBe(true);
  expect(credential.calls).toHaveLength(1);
  expect(requests).toHaveLength(0);
});

test("the credential's refreshAfterTimestamp starts the refresh earlier", async () => {
  const { credential, call, sent, clock } = setup();
  credential.script.push(() => Promise.resolve({ token: 'early', expiresOnTimestamp: 24 * hour, refreshAfterTimestamp: hour }));
  await call();
  await clock.advance(hour + 1);
  await call();
  await settle();
  await call();
  expect(sent()).toEqual(['Bearer early', 'Bearer early', 'Bearer token-1']);
});

test('a caller that gives up stops waiting; the shared refresh goes on for the others', async () => {
  const { credential, transport, call, sent } = setup();
  const pending = deferred<AccessToken | null>();
  credential.script.push(() => pending.promise);
  const controller = new AbortController();
  const impatient = transport.json({ method: 'GET', path: 'counters/c', signal: controller.signal }).catch((e: unknown) => e);
  const patient = call();
  await settle();
  controller.abort();
  expect(await impatient).toMatchObject({ name: 'AbortError' });
  pending.resolve({ token: 'late', expiresOnTimestamp: hour });
  await patient;
  expect(sent()).toEqual(['Bearer late']);
  expect(credential.calls).toHaveLength(1);
});

test('the key goes beside the token (keys+entra: the host checks the key, the token names the caller)', async () => {
  const clock = new FakeClock();
  const credential = new FakeTokenCredential(clock);
  const { transport, requests } = fakeTransport(() => json(200, {}), {
    baseUrl: 'https://tallyho.example.net',
    clock,
    credential,
    scopes: ['api://tallyho-app/Tallyho.Use'],
    functionKey: 'fn-key',
  });
  await transport.json({ method: 'GET', path: 'counters/c' });
  expect(requests[0]?.headers).toMatchObject({ authorization: 'Bearer token-1', 'x-functions-key': 'fn-key' });
  expect(credential.calls[0]?.scopes).toEqual(['api://tallyho-app/Tallyho.Use']);
});

describe('new TallyhoClient(url, credential, options), as Azure SDK clients are made', () => {
  const make = (url: string, credential: TokenCredential | string, options = {}) => {
    const fake = fakeFetch(() => json(200, { name: 'c', value: 1 }));
    const client = new TallyhoClient(url, credential, { fetch: fake.fetch, clock: new FakeClock(), ...options });
    return { client, requests: fake.requests };
  };

  test('a token credential, with the audience given as the app id', async () => {
    const credential = new FakeTokenCredential(new FakeClock());
    const { client, requests } = make('https://tallyho.example.net', credential, { audience: '00000000-0000-0000-0000-0000000000aa' });
    await client.counters.get('c');
    expect(requests[0]?.headers.authorization).toBe('Bearer token-1');
    expect(credential.calls[0]?.scopes).toEqual(['00000000-0000-0000-0000-0000000000aa/.default']);
  });

  test('a Tallyho credential string is sent as it is, on every request', async () => {
    const { client, requests } = make('http://127.0.0.1:7071', 'tly1.eyJhbGciOiJIUzI1NiJ9.e30.sig');
    await client.counters.get('c');
    await client.counters.get('c');
    expect(requests.map((r) => r.headers.authorization)).toEqual(Array(2).fill('Bearer tly1.eyJhbGciOiJIUzI1NiJ9.e30.sig'));
  });

  test.each([
    [
      'a token credential without audience or scopes',
      () => make('https://t.example', new FakeTokenCredential(new FakeClock())),
      /audience/,
    ],
    ['a string that is no Tallyho credential (a key?)', () => make('https://t.example', 'abc-function-key'), /functionKey/],
    ['plain http to another machine', () => make('http://tallyho.example.net', 'tly1.x.y.z'), /only over https/],
    ['empty scopes', () => make('https://t.example', new FakeTokenCredential(new FakeClock()), { scopes: [] }), /at least one scope/],
  ])('refused when the client is made: %s', (_, build, message) => {
    expect(build).toThrow(message);
  });
});
