/**
 * Named callers through the client, against the host of the run: an admin client issues a
 * credential, a client made with it is that caller (`me`), and once revoked the same client is
 * refused (401) by the instance that revoked it.
 */
import { TallyhoClient } from '../../src/client';
import { type E2eHost, hostLabel, startE2eHost } from '../../../../test/e2e/support/harness';
import { unique } from '../../../../test/e2e/support/names';

describe(`named callers with @tallyho/client against the ${hostLabel()}`, () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost({ env: { TALLYHO_CREDENTIALS_KEY: Buffer.alloc(32, 7).toString('base64') } });
  });
  afterAll(async () => {
    await host?.dispose();
  });

  test('issue, me, list and revoke', async () => {
    const keys = {
      ...(host.keys.function === undefined ? {} : { functionKey: host.keys.function }),
      ...(host.keys.admin === undefined ? {} : { adminKey: host.keys.admin }),
    };
    const admin = new TallyhoClient({ baseUrl: host.url('/api'), ...keys });
    const name = unique('client-caller');
    const issued = await admin.callers.issue(name, ['worker:thumbnails']);
    expect(issued).toMatchObject({ name, id: `cred:${name}`, roles: ['worker:thumbnails'], state: 'active' });

    const asCaller = new TallyhoClient(host.url('/api'), issued.credential, keys);
    expect(await asCaller.callers.me()).toMatchObject({ id: `cred:${name}`, kind: 'credential', roles: ['worker:thumbnails'] });
    const listed = await admin.callers.list();
    expect(listed.find((c) => c.name === name)).toMatchObject({ state: 'active', credentialId: issued.credentialId });
    expect(JSON.stringify(listed)).not.toContain(issued.credential);

    expect(await admin.callers.revoke(name)).toMatchObject({ name, state: 'revoked' });
    await expect(asCaller.callers.me()).rejects.toMatchObject({ status: 401 });
  });
});
