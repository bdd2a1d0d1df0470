/**
 * Named callers over HTTP, on two app instances sharing one storage account (two hosts, one
 * Azurite account, each its own task hub): an admin issues a credential on instance A, the caller
 * uses it on instance B, the admin revokes it on A, and B refuses it within
 * TALLYHO_CREDENTIALS_REVOCATION_CACHE_SECONDS (set to 2 s here; the test waits on B's answer, not
 * on a clock). Nothing the admin lists carries the credential.
 */
import { randomBytes } from 'node:crypto';

import { describeOwnHost, type E2eHost, hostLabel, startE2eHost } from './support/harness';
import { unique } from './support/names';
import { until } from './support/wait';

describeOwnHost(`named callers across two instances (${hostLabel()})`, () => {
  let a: E2eHost;
  let b: E2eHost;
  const key = randomBytes(32).toString('base64');
  const env = { TALLYHO_CREDENTIALS_KEY: key, TALLYHO_CREDENTIALS_REVOCATION_CACHE_SECONDS: '2' };

  beforeAll(async () => {
    a = await startE2eHost({ env });
    b = await startE2eHost({ env: { ...env, AzureWebJobsStorage: a.storage } });
  }, 180_000);

  afterAll(async () => {
    await b?.dispose();
    await a?.dispose();
  });

  const call = async (host: E2eHost, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(host.url(path), {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> };
  };

  test('issued on one instance, used on the other, revoked on the first: the other refuses it within the bound', async () => {
    const admin = { 'x-functions-key': a.keys.admin ?? '' };
    const name = unique('caller');
    const issued = await call(a, 'POST', '/api/callers', admin, { name, roles: ['submitter'] });
    expect(issued.status).toBe(201);
    const credential = String(issued.body.credential);
    expect(credential).toMatch(/^tly1\./);
    const as = { 'x-functions-key': b.keys.function ?? '', authorization: `Bearer ${credential}` };

    // On B: who it is, and what it holds once it has submitted a job no worker serves (so it stays open).
    const processor = unique('idle');
    expect((await call(a, 'PUT', `/api/processors/${processor}`, admin, { type: 'external' })).status).toBe(201);
    expect((await call(b, 'POST', '/api/jobs', as, { processor, items: [{ id: 'i-1' }] })).status).toBe(202);
    const me = await call(b, 'GET', '/api/callers/me', as);
    expect(me).toMatchObject({
      status: 200,
      body: { id: `cred:${name}`, kind: 'credential', roles: ['submitter'], holds: { openJobs: 1, heldRequests: 0 } },
    });

    const listed = await call(b, 'GET', '/api/callers', { 'x-functions-key': b.keys.admin ?? '' });
    expect(listed.body.callers).toEqual(expect.arrayContaining([expect.objectContaining({ name, state: 'active' })]));
    expect(JSON.stringify(listed.body)).not.toContain(credential.slice(5));

    expect((await call(a, 'DELETE', `/api/callers/${name}`, admin)).body).toMatchObject({ name, state: 'revoked' });
    // A refuses it at once; B once its look at the revocations is older than the bound.
    const onA = await call(a, 'GET', '/api/callers/me', {
      'x-functions-key': a.keys.function ?? '',
      authorization: `Bearer ${credential}`,
    });
    expect(onA.status).toBe(401);
    const onB = await until('B refuses the revoked credential', async () => {
      const answer = await call(b, 'GET', '/api/callers/me', as);
      return answer.status === 401 ? answer : undefined;
    });
    expect(String(onB.body.detail)).toMatch(/revoked/);
  }, 120_000);
});
