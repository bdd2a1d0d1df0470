/**
 * The composition root: one app built from its deps without any I/O and without a Durable client,
 * the capabilities' services on the client they are given, and the one route list — registered by
 * functions/ and documented by the OpenAPI document — built without an app.
 */
import { type App, createApp } from '../../../shared/app/createApp';
import { appRoutes, documentedRoutes } from '../../../shared/app/routes';
import { loadAppConfig, registrationSettings } from '../../../shared/app/settings';
import { ManualClock } from '../../../shared/clock';
import { AppError } from '../../../shared/errors';
import { MemoryLogger } from '../../../shared/log';
import { serviceBusSenders } from '../../../shared/messaging/serviceBus';
import { createStorageClients } from '../../../shared/storage/clients';
import { callRoute, routeNamed, routeRequest } from '../../support/routeRequest';

function testApp(): App {
  const config = loadAppConfig({ AzureWebJobsStorage: 'UseDevelopmentStorage=true' });
  let ids = 0;
  return createApp({
    config,
    // Clients are built, never used: nothing below reaches storage.
    storage: createStorageClients(config.storage, { retry: config.storageRetry }),
    serviceBus: serviceBusSenders(undefined),
    clock: new ManualClock(Date.parse('2026-01-01T00:00:00Z')),
    random: () => 0.5,
    logger: new MemoryLogger(),
    newId: () => `id-${++ids}`,
  });
}

describe('createApp', () => {
  it('builds every service once, with no I/O and no Durable client: each invocation that needs one brings its own', () => {
    const app = testApp();
    expect('durable' in app).toBe(false);
    expect(app.sequences).toBe(app.sequences);
    expect(app.gates.hub).toBe(app.gates.hub);
  });

  it('shuts down without having touched storage or Service Bus', async () => {
    await expect(testApp().shutdown()).resolves.toBeUndefined();
  });
});

describe('the route list', () => {
  it('is built without an app, and the registered list and the documented one are the same routes', () => {
    const documented = documentedRoutes().map((r) => r.name);
    const registered = appRoutes(() => testApp(), registrationSettings({})).map((r) => r.name);
    expect(registered).toEqual(documented);
    expect(new Set(registered).size).toBe(registered.length);
  });

  it('reaches the app only when a request needs it: a bad setting is the health check’s answer, not a failed load', async () => {
    const bad = new AppError('ConfigurationInvalid', 'Invalid settings', { extra: { settings: ['TALLYHO_GATES_MAX_WAITERS'] } });
    const routes = appRoutes(() => {
      throw bad;
    }, registrationSettings({}));
    const response = await callRoute<{ checks: Record<string, { status: string; settings?: string[] }> }>(routeNamed(routes, 'health'));
    expect(response.status).toBe(503);
    expect(response.body.checks.config).toEqual({ status: 'fail', code: 'ConfigurationInvalid', settings: ['TALLYHO_GATES_MAX_WAITERS'] });
  });

  it('declares which routes need the invocation’s Durable client (the registration gives them the binding)', () => {
    const durable = documentedRoutes()
      .filter((r) => r.durable === true)
      .map((r) => r.name);
    expect(durable.filter((name) => !/^(gates|schedules|streams)/.test(name))).toEqual(['jobsRetryFailed']);
    expect(durable).not.toContain('gatesAudit');
    // A gate is a table row: reading and waiting on it take no Durable client.
    expect(durable.filter((name) => name.startsWith('gates'))).toEqual(['gatesCreate', 'gatesRelease', 'gatesReset', 'gatesStartRun']);
  });

  it('a Durable route run without a client fails as a server fault, never silently', async () => {
    const app = testApp();
    const route = routeNamed(
      appRoutes(() => app, registrationSettings({})),
      'gatesRelease',
    );
    const logger = new MemoryLogger();
    const result = await route.run(routeRequest(route, { params: { name: 'launch' }, body: {} }), { logger });
    expect(result.status).toBe(500);
    expect(result.jsonBody).toMatchObject({ code: 'Internal' });
    expect(JSON.stringify(logger.events('http.unhandled'))).toContain('has no Durable client (declare durable: true)');
  });
});
