import { freePort } from '../../devhost/azurite';
import { systemClock } from '../../shared/clock';
import { loadAppConfig as loadConfig } from '../../shared/app/settings';
import { devStorageAccount } from '../../shared/storage/connection';
import type { HealthDeps } from '../../shared/health/check';
import { healthRoutes } from '../../shared/health/routes';
import { createStorageClients } from '../../shared/storage/clients';
import { callRoute, routeNamed } from '../support/routeRequest';

type Env = Record<string, string>;

/** Every request the storage clients send: tables per attempt, blobs and queues per call (shared/storage/clients.ts). */
type Sent = { service: string; method: string }[];

function depsFor(env: Env, sent?: Sent): HealthDeps {
  return {
    config: () => loadConfig(env),
    storage: () => {
      const config = loadConfig(env);
      return createStorageClients(config.storage, {
        retry: config.storageRetry,
        ...(sent === undefined ? {} : { observe: (service: string, method: string) => void sent.push({ service, method }) }),
      });
    },
    clock: systemClock,
  };
}

function health(env: Env, sent?: Sent) {
  return callRoute<Record<string, unknown> & { checks: Record<string, Record<string, unknown>> }>(
    routeNamed(
      healthRoutes(() => depsFor(env, sent)),
      'health',
    ),
  );
}

const fastFailure = { TALLYHO_STORAGE_MAX_TRIES: '1', TALLYHO_STORAGE_TRY_TIMEOUT_MS: '500' };

describe('GET /api/health', () => {
  it('answers 200 with every storage check passing against Azurite', async () => {
    const response = await health({ AzureWebJobsStorage: process.env.TEST_STORAGE_CONNECTION! });
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body.status).toBe('healthy');
    for (const check of ['config', 'blob', 'queue', 'table']) expect(response.body.checks[check]?.status).toBe('pass');
    expect(response.body.checks.serviceBus).toEqual({ status: 'skipped', detail: 'not configured' });
  });

  it('answers 503 problem+json naming the failed services when storage is unreachable, and reveals no secret', async () => {
    const port = await freePort();
    const account = 'secretaccount42';
    const key = Buffer.from('not-a-real-key-but-secret-all-the-same').toString('base64');
    const endpoint = (service: string) => `${service}Endpoint=http://127.0.0.1:${port}/${account}`;
    const connection = `DefaultEndpointsProtocol=http;AccountName=${account};AccountKey=${key};${endpoint('Blob')};${endpoint('Queue')};${endpoint('Table')}`;
    const sent: Sent = [];
    const response = await health({ AzureWebJobsStorage: connection, ...fastFailure }, sent);
    // One try per service, as TALLYHO_STORAGE_MAX_TRIES=1 says: the check fails fast by trying once,
    // not by racing a clock.
    expect(sent.map((r) => r.service).sort()).toEqual(['blob', 'queue', 'table']);
    expect(response.status).toBe(503);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(response.body).toMatchObject({ status: 503, code: 'DependencyUnavailable', instance: '/api/health' });
    expect(response.body.detail).toBe('Not healthy: blob, queue, table failed');
    for (const check of ['blob', 'queue', 'table']) {
      expect(response.body.checks[check]).toMatchObject({ status: 'fail', code: 'DependencyUnavailable' });
    }
    expect(response.body.checks.config?.status).toBe('pass');
    const text = JSON.stringify(response);
    for (const secret of [key, account, String(port), 'AccountKey', '127.0.0.1', devStorageAccount.key]) expect(text).not.toContain(secret);
  });

  it('answers 503 naming the invalid settings, never their values', async () => {
    const secret = 'Zm9vYmFyLXNlY3JldC1rZXk=';
    const response = await health({
      AzureWebJobsStorage: `AccountKey=${secret};EndpointSuffix=core.windows.net`,
      TALLYHO_STORAGE_MAX_TRIES: 'lots',
    });
    expect(response.status).toBe(503);
    expect(response.body.checks.config).toMatchObject({ status: 'fail', code: 'ConfigurationInvalid' });
    expect(response.body.checks.config?.settings).toEqual(expect.arrayContaining(['AzureWebJobsStorage', 'TALLYHO_STORAGE_MAX_TRIES']));
    expect(response.body.checks.blob).toEqual({ status: 'skipped', detail: 'configuration invalid' });
    const text = JSON.stringify(response);
    expect(text).not.toContain(secret);
    expect(text).not.toContain('lots');
  });

  it('is anonymous, GET, at /api/health', () => {
    const route = routeNamed(
      healthRoutes(() => depsFor({})),
      'health',
    );
    expect({ method: route.method, path: route.path, auth: route.auth }).toEqual({ method: 'GET', path: 'health', auth: 'anonymous' });
  });
});
