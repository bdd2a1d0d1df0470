/**
 * Microsoft Entra ID tokens are checked in the app, offline: a key set served on this machine stands
 * in for the tenant's (`TALLYHO_ENTRA_AUTHORITY`). Every way a token can be wrong answers 401 with a
 * problem saying which, and the route's handler is never reached; a good token names its caller by
 * object id with the roles it carries.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { exportJWK, generateKeyPair, type JWK, type KeyLike, SignJWT, UnsecuredJWT } from 'jose';

import { readSettings } from '../../../shared/config';
import { defineRoute, type RequestLike } from '../../../shared/http/route';
import type { Caller } from '../../../shared/identity/caller';
import { createCallerResolver } from '../../../shared/identity/resolve';
import { identitySettings } from '../../../shared/identity/settings';

const tenant = '11111111-2222-3333-4444-555555555555';
const audience = 'api://tallyho-test';
let server: Server;
let authority = '';
let signingKey: KeyLike;
let strangerKey: KeyLike;
let keySetRequests = 0;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  signingKey = pair.privateKey;
  strangerKey = (await generateKeyPair('RS256')).privateKey;
  const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  server = createServer((req, res) => {
    keySetRequests++;
    if (req.url === `/${tenant}/discovery/v2.0/keys`) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  authority = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function resolverFor(authorityUrl: string) {
  const settings = readSettings(
    { identity: identitySettings },
    {
      TALLYHO_AUTH_MODE: 'entra',
      TALLYHO_ENTRA_TENANT_ID: tenant,
      TALLYHO_ENTRA_AUDIENCES: audience,
      TALLYHO_ENTRA_AUTHORITY: authorityUrl,
    },
  ).identity;
  return createCallerResolver(settings, { appServiceAuthEnabled: false });
}

const reached: Caller[] = [];
const route = defineRoute({
  name: 'countersGet',
  method: 'GET',
  path: 'counters/{name}',
  summary: 'probe',
  tags: [],
  responses: {},
  handle: (input) => {
    reached.push(input.caller);
    return Promise.resolve({ status: 204 });
  },
});

function request(token: string | undefined): RequestLike {
  return {
    method: 'GET',
    url: 'http://localhost/api/counters/c',
    headers: { get: (name) => (name.toLowerCase() === 'authorization' && token !== undefined ? `Bearer ${token}` : null) },
    params: {},
    query: new URLSearchParams(),
    text: () => Promise.resolve(''),
  };
}

interface Claims {
  readonly iss?: string;
  readonly aud?: string;
  readonly exp?: number;
  readonly nbf?: number;
  readonly roles?: readonly string[];
}

const now = () => Math.floor(Date.now() / 1000);

function token(claims: Claims = {}, key: KeyLike = signingKey, kid = 'k1'): Promise<string> {
  let jwt = new SignJWT({ oid: 'AAAAAAAA-0000-0000-0000-000000000001', roles: claims.roles ?? ['Tallyho.Submitter'], name: 'Order entry' })
    .setProtectedHeader({ alg: 'RS256', kid })
    .setIssuer(claims.iss ?? `${authority}/${tenant}/v2.0`)
    .setAudience(claims.aud ?? audience)
    .setIssuedAt(now() - 600)
    .setExpirationTime(claims.exp ?? now() + 3600);
  if (claims.nbf !== undefined) jwt = jwt.setNotBefore(claims.nbf);
  return jwt.sign(key);
}

async function refusal(bearer: string | undefined, resolver = resolverFor(authority)) {
  reached.length = 0;
  const result = await route.run(request(bearer), { callers: () => resolver });
  expect(reached).toEqual([]);
  expect(result.status).toBe(401);
  expect(result.headers).toMatchObject({ 'content-type': 'application/problem+json' });
  return result.jsonBody as { code: string; detail: string };
}

test('a good token names its caller by object id, with the Tallyho roles it carries', async () => {
  reached.length = 0;
  const result = await route.run(request(await token({ roles: ['Tallyho.Worker.invoices', 'Other.Role'] })), {
    callers: () => resolverFor(authority),
  });
  expect(result.status).toBe(204);
  expect(reached).toEqual([
    {
      id: 'entra:aaaaaaaa-0000-0000-0000-000000000001',
      kind: 'entra',
      name: 'Order entry',
      roles: { admin: false, submitter: false, workerOf: ['invoices'] },
    },
  ]);
});

test.each([
  [
    'wrong issuer',
    () => token({ iss: `https://login.microsoftonline.com/${'9'.repeat(8)}-2222-3333-4444-555555555555/v2.0` }),
    /another issuer/,
  ],
  ['wrong audience', () => token({ aud: 'api://someone-else' }), /another audience/],
  ['expired', () => token({ exp: now() - 3600 }), /has expired/],
  ['not yet valid', () => token({ nbf: now() + 3600 }), /not valid yet/],
  [
    'unsigned (alg: none)',
    () =>
      Promise.resolve(
        new UnsecuredJWT({ oid: 'x' }).setIssuer(`${authority}/${tenant}/v2.0`).setAudience(audience).setExpirationTime('1h').encode(),
      ),
    /algorithm this app accepts/,
  ],
  ['signed with an unknown key', () => token({}, strangerKey, 'k2'), /key this app does not know/],
  ['signed with an unknown key under a known kid', () => token({}, strangerKey, 'k1'), /signature does not verify/],
  ['not a token at all', () => Promise.resolve('not-a-jwt'), /not a valid signed token/],
])('%s: 401 with a problem saying so, no use-case reached', async (_, make, detail) => {
  const problem = await refusal(await make());
  expect(problem.code).toBe('Unauthorized');
  expect(problem.detail).toMatch(detail);
});

test('a key set that cannot be reached: 401 saying the token cannot be checked now', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const problem = await refusal(await token(), resolverFor(`http://127.0.0.1:${port}`));
  expect(problem.detail).toMatch(/signing keys could not be fetched/);
});

test('no token in entra mode: 401 asking for one', async () => {
  expect((await refusal(undefined)).detail).toMatch(/Send a Microsoft Entra ID access token/);
});

test('the key set is fetched once and kept for the tokens that follow', async () => {
  const resolver = resolverFor(authority);
  const before = keySetRequests;
  for (let i = 0; i < 5; i++) expect((await route.run(request(await token()), { callers: () => resolver })).status).toBe(204);
  expect(keySetRequests - before).toBe(1);
});

test('a token without a Tallyho role reaches no function-level route: 403', async () => {
  reached.length = 0;
  const result = await route.run(request(await token({ roles: [] })), { callers: () => resolverFor(authority) });
  expect(result.status).toBe(403);
  expect(reached).toEqual([]);
});
