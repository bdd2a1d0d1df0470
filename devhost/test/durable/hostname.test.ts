/**
 * Parity with the real host — the Durable client and the host's base URL
 * (devhost/docs/real-host.md#host-name: "The Durable client needs WEBSITE_HOSTNAME
 * (Azure and func set it): without it every client call fails with `Webhooks are not configured`").
 * The link origin and its scheme follow the Functions host's DefaultScriptWebHookProvider
 * (`http` only for a name starting `localhost:`). The fixture app runs in-process, as `startHost`
 * runs any app.
 */
import { webhookOrigin } from '../../app/hostname';
import { nativeProcess } from '../../core/nativeModule';
import { finished, type InProcessHost as Started, startInProcess as start } from './support/inProcess';

const hook = '/runtime/webhooks/durabletask';

/** The admin API's "run now" for a timer function. */
async function runNow(h: Started, name: string): Promise<number> {
  const res = await fetch(`${h.host.baseUrl}/admin/functions/${name}`, {
    method: 'POST',
    headers: { 'x-functions-key': h.host.masterKey, 'content-type': 'application/json' },
    body: '{}',
  });
  return res.status;
}

describe('real host (real-host.md#host-name): without WEBSITE_HOSTNAME the Durable client fails with "Webhooks are not configured"', () => {
  let h: Started;
  beforeAll(async () => {
    h = await start({ hostnameLikeFuncStart: false, env: { WEBSITE_HOSTNAME: undefined } });
  });
  afterAll(async () => {
    await h.host.stop();
  });

  test('the host has no host name, and says at start what that breaks', () => {
    expect(h.host.hostName).toBeUndefined();
    expect(h.logs).toContainEqual(expect.stringMatching(/^warn: .*WEBSITE_HOSTNAME is not set.*Webhooks are not configured/));
  });

  test('an HTTP function with a durableClient input answers an empty 500 before it runs, and starts nothing', async () => {
    const res = await fetch(`${h.host.baseUrl}/api/start/sleeper/no-host-1`, { method: 'POST', body: '1' });
    expect(res.status).toBe(500);
    expect(await res.text()).toBe('');
    expect(h.client.status('no-host-1', { showHistory: false })).toBeUndefined();
    expect(h.logs).toContainEqual(
      expect.stringMatching(/^error: .*startAndCheck.*Exception binding parameter '[^']+': Webhooks are not configured/),
    );
  });

  test('an activity with a durableClient input fails, and so does its orchestration', async () => {
    const status = await finished(h.client, await h.client.start('relay', { input: JSON.stringify({ id: 'nobody', value: 1 }) }));
    expect(status.runtimeStatus).toBe('Failed');
    expect(JSON.stringify(status.output)).toContain('Webhooks are not configured');
  });

  test('a timer with a durableClient input fails its run, and the host goes on', async () => {
    expect(await runNow(h, 'yearlyStarter')).toBe(202);
    await h.host.settle();
    expect(h.logs).toContainEqual(
      expect.stringMatching(/^error: Executed 'Functions\.yearlyStarter' \(Failed.*Webhooks are not configured/s),
    );
    expect(h.client.status('from-timer', { showHistory: false })).toBeUndefined();
  });

  test('functions without a client binding, and the Durable HTTP API, still work', async () => {
    expect((await fetch(`${h.host.baseUrl}/api/ping`)).status).toBe(200);
    const started = await fetch(`${h.host.baseUrl}${hook}/orchestrators/sleeper/by-hook`, { method: 'POST', body: '0' });
    expect(started.status).toBe(202);
    expect((await finished(h.client, 'by-hook')).runtimeStatus).toBe('Completed');
  });
});

describe('like func start: WEBSITE_HOSTNAME is localhost:<port> when no setting gives it', () => {
  let h: Started;
  beforeAll(async () => {
    h = await start({ env: { WEBSITE_HOSTNAME: undefined } });
  });
  afterAll(async () => {
    await h.host.stop();
  });

  test('client links are http://localhost:<port>, carry the system key, and work', async () => {
    expect(h.host.hostName).toBe(`localhost:${h.host.port}`);
    // durable-functions' getClient reads the app's environment (it rewrites links to :7071 when unset).
    expect(nativeProcess().env.WEBSITE_HOSTNAME).toBe(`localhost:${h.host.port}`);
    const res = await fetch(`${h.host.baseUrl}/api/links/sleeper/func-like-1`, { method: 'POST', body: '0' });
    expect(res.status).toBe(200);
    const links = (await res.json()) as Record<string, string>;
    expect(links.statusQueryGetUri).toMatch(
      new RegExp(`^http://localhost:${h.host.port}${hook}/instances/func-like-1\\?taskHub=[^&]+&connection=Storage&code=`),
    );
    await finished(h.client, 'func-like-1');
    const status = await fetch(links.statusQueryGetUri as string);
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ runtimeStatus: 'Completed', output: 'woke' });
  });

  test('a timer with a durableClient input runs', async () => {
    expect(await runNow(h, 'yearlyStarter')).toBe(202);
    expect((await finished(h.client, 'from-timer')).runtimeStatus).toBe('Completed');
  });

  test('stopping the host takes its WEBSITE_HOSTNAME out of the environment again', async () => {
    const other = await start({ env: { WEBSITE_HOSTNAME: undefined } });
    // A value one devhost put in the environment is not another's setting.
    expect(other.host.hostName).toBe(`localhost:${other.host.port}`);
    await other.host.stop();
    expect(nativeProcess().env.WEBSITE_HOSTNAME).toBe(`localhost:${h.host.port}`);
  });
});

describe('a configured WEBSITE_HOSTNAME', () => {
  let h: Started;
  beforeAll(async () => {
    h = await start({ env: { WEBSITE_HOSTNAME: 'tallyho.example.net' } });
  });
  afterAll(async () => {
    await h.host.stop();
  });

  test('is the origin of the links (https for a name that is not localhost:…), while the client still reaches this host', async () => {
    expect(h.host.hostName).toBe('tallyho.example.net');
    const res = await fetch(`${h.host.baseUrl}/api/links/sleeper/named-1`, { method: 'POST', body: '0' });
    expect(res.status).toBe(200);
    const links = (await res.json()) as Record<string, string>;
    expect(links.statusQueryGetUri).toMatch(new RegExp(`^https://tallyho\\.example\\.net${hook}/instances/named-1\\?`));
    expect((await finished(h.client, 'named-1')).runtimeStatus).toBe('Completed');
  });
});

test('the webhook origin is http only for a host name starting "localhost:" (any case), as DefaultScriptWebHookProvider builds it', () => {
  expect(webhookOrigin('localhost:7071')).toBe('http://localhost:7071');
  expect(webhookOrigin('LocalHost:7071')).toBe('http://LocalHost:7071');
  expect(webhookOrigin('127.0.0.1:7071')).toBe('https://127.0.0.1:7071');
  expect(webhookOrigin('localhost')).toBe('https://localhost');
  expect(webhookOrigin('tallyho-func.azurewebsites.net')).toBe('https://tallyho-func.azurewebsites.net');
});
