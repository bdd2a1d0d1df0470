import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { loadHostJson } from '../app/hostJson';
import { nativeProcess } from '../core/nativeModule';
import { isFunctionDisabled, mergeSettings, resolveSettingExpressions } from '../app/settings';
import type { RunningHost } from '../host';
import { fixture, startFixture } from './support';

describe('settings resolution', () => {
  test('%Setting% expressions resolve case-insensitively; %% is a percent sign; unset ones name the setting', () => {
    const settings = { Queue_Name: 'orders', Other: 'x' };
    expect(resolveSettingExpressions('%queue_name%-in', settings, 'here')).toBe('orders-in');
    expect(resolveSettingExpressions('100%% %Other%', settings, 'here')).toBe('100% x');
    expect(() => resolveSettingExpressions('%Missing%', settings, 'binding q.queueName')).toThrow(
      expect.objectContaining({ name: 'DevhostError', code: 'SettingsInvalid' }),
    );
    expect(() => resolveSettingExpressions('%Missing%', settings, 'binding q.queueName')).toThrow(/binding q\.queueName.*Missing/);
  });

  test('environment wins over local.settings.json, explicit overrides win over both', () => {
    const { settings, skipped } = mergeSettings(
      { A: 'local', B: 'local', C: 'local' },
      { A: 'env', B: 'env' },
      { B: 'override', D: 'override' },
    );
    expect(settings).toMatchObject({ A: 'env', B: 'override', C: 'local', D: 'override' });
    expect(skipped).toEqual(['A', 'B']);
  });

  test('AzureWebJobs.<name>.Disabled (or __Disabled) disables a function', () => {
    expect(isFunctionDisabled({ 'AzureWebJobs.tick.Disabled': 'true' }, 'tick')).toBe(true);
    expect(isFunctionDisabled({ AzureWebJobs__tick__Disabled: '1' }, 'tick')).toBe(true);
    expect(isFunctionDisabled({ 'AzureWebJobs.tick.Disabled': 'false' }, 'tick')).toBe(false);
    expect(isFunctionDisabled({}, 'tick')).toBe(false);
  });

  test('host.json: AzureFunctionsJobHost__ overrides (typed like the value they replace), then %Setting%', () => {
    const hostJson = loadHostJson(fixture('basic'), {
      GREETING: 'hi',
      AzureFunctionsJobHost__extensions__queues__maxPollingInterval: '00:00:05',
      AzureFunctionsJobHost__Extensions__DurableTask__HubName: 'hub1',
      AzureFunctionsJobHost__custom__count: '3',
    });
    expect(hostJson).toMatchObject({
      custom: { greeting: 'hi', count: '3' },
      extensions: { queues: { maxPollingInterval: '00:00:05' }, DurableTask: { HubName: 'hub1' } },
    });
    // An override replaces a value that refers to an unset setting, so that setting is not needed.
    expect(loadHostJson(fixture('basic'), { AzureFunctionsJobHost__custom__greeting: 'direct' })).toMatchObject({
      custom: { greeting: 'direct' },
    });
    expect(() => loadHostJson(fixture('basic'), {})).toThrow(/GREETING/);
  });
});

describe('settings in a running host', () => {
  let host: RunningHost;

  beforeAll(async () => {
    // The environment the app sees is Node's own (jest gives tests a copy).
    nativeProcess().env.PRECEDENCE_PROBE = 'from-environment';
    host = await startFixture('basic', {
      env: {
        OUT_QUEUE: 'unused',
        OUT_CONTAINER: 'unused',
        GREETING: 'from-override',
        AzureFunctionsJobHost__extensions__http__routePrefix: 'v1',
      },
    });
  });
  afterAll(async () => {
    await host.stop();
    Reflect.deleteProperty(nativeProcess().env, 'PRECEDENCE_PROBE');
  });

  test('the app sees overrides > environment > local.settings.json, and the route prefix override applies', async () => {
    const res = await fetch(`${host.baseUrl}/v1/settings`);
    expect(await res.json()).toEqual({ greeting: 'from-override', probe: 'from-environment', started: true });
    expect((await fetch(`${host.baseUrl}/api/settings`)).status).toBe(404);
    expect((await fetch(`${host.baseUrl}/v1/things/3`)).status).toBe(200);
  });

  test('a disabled function is not served and is listed as disabled', async () => {
    expect((await fetch(`${host.baseUrl}/v1/off`)).status).toBe(404);
    expect(host.functions.find((f) => f.name === 'off')?.isDisabled).toBe(true);
  });
});

describe('keys', () => {
  let host: RunningHost;
  const get = (path: string, key?: { header?: string; code?: string }) =>
    fetch(`${host.baseUrl}${path}${key?.code === undefined ? '' : `?code=${key.code}`}`, {
      headers: key?.header === undefined ? {} : { 'x-functions-key': key.header },
    });

  beforeAll(async () => {
    host = await startFixture('basic', {
      env: { OUT_QUEUE: 'unused', OUT_CONTAINER: 'unused', FUNCTIONS_KEY: 'fk', FUNCTIONS_ADMIN_KEY: 'ak' },
    });
  });
  afterAll(async () => {
    await host.stop();
  });

  test('anonymous never needs a key', async () => {
    expect((await get('/api/nothing')).status).toBe(204);
  });

  test('function level: 401 without or with a wrong key; function key (header or code) or admin key pass', async () => {
    expect((await get('/api/keyed')).status).toBe(401);
    expect((await get('/api/keyed', { header: 'wrong' })).status).toBe(401);
    expect((await get('/api/keyed', { header: 'fk' })).status).toBe(200);
    expect((await get('/api/keyed', { code: 'fk' })).status).toBe(200);
    expect((await get('/api/keyed', { header: 'ak' })).status).toBe(200);
  });

  test('admin level and the admin API need the admin key (the function key: 401 on a function route, 403 on the admin API)', async () => {
    expect((await get('/api/privileged', { header: 'fk' })).status).toBe(401);
    expect((await get('/api/privileged', { header: 'ak' })).status).toBe(200);
    expect((await get('/admin/functions')).status).toBe(401);
    // The real host answers 403 to a key it knows that lacks the level (devhost/docs/real-host.md#keys).
    expect((await get('/admin/functions', { header: 'fk' })).status).toBe(403);
    expect((await get('/admin/functions', { header: 'ak' })).status).toBe(200);
  });
});

describe('load order', () => {
  test('@azure/functions loaded before the host fails with a message saying so', () => {
    const script = `
      require('@azure/functions');
      require(${JSON.stringify(join(__dirname, '..', '..', 'dist', 'devhost', 'host.js'))})
        .startHost({ appRoot: ${JSON.stringify(fixture('stream'))}, port: 0, quiet: true })
        .then(() => { console.log('STARTED'); process.exit(0); }, (err) => { console.log(err.message); process.exit(3); });
    `;
    const result = spawnSync(process.execPath, ['-e', script], { cwd: fixture('stream'), encoding: 'utf8', timeout: 30_000 });
    expect(result.stdout).toMatch(/@azure\/functions was loaded before the devhost could provide @azure\/functions-core/);
    expect(result.status).toBe(3);
  });
});
