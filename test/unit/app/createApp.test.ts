/**
 * The composition root: one app built from its deps without any I/O and without a Durable client,
 * the capabilities' services on the client they are given, and the one route list — registered by
 * functions/ and documented by the OpenAPI document — built without an app.
 */
import { type App, createApp } from '../../../shared/app/createApp';
import * as counters from '../../../shared/counters';
import * as gates from '../../../shared/gates';
import * as jobs from '../../../shared/jobs';
import * as schedules from '../../../shared/schedules';
import * as sequences from '../../../shared/sequences';
import * as streams from '../../../shared/streams';
import { appRoutes, documentedRoutes } from '../../../shared/app/routes';
import { loadAppConfig, registrationSettings } from '../../../shared/app/settings';
import { ManualClock } from '../../../shared/clock';
import { AppError } from '../../../shared/errors';
import { MemoryLogger } from '../../../shared/log';
import { serviceBusSenders } from '../../../shared/messaging/serviceBus';
import { createStorageClients } from '../../../shared/storage/clients';
import { callRoute, routeNamed, routeRequest } from '../../support/routeRequest';

// The capabilities' front doors, counted: "once" is a count of constructions, not a comparison of a
// property with itself.
jest.mock('../../../shared/counters', () => counted('../../../shared/counters', 'createCounters'));
jest.mock('../../../shared/gates', () => counted('../../../shared/gates', 'createGates'));
jest.mock('../../../shared/jobs', () => counted('../../../shared/jobs', 'createJobs'));
jest.mock('../../../shared/schedules', () => counted('../../../shared/schedules', 'createSchedules'));
jest.mock('../../../shared/sequences', () => counted('../../../shared/sequences', 'createSequences'));
jest.mock('../../../shared/streams', () => counted('../../../shared/streams', 'createStreams'));

/** The module with its builder wrapped in a jest.fn that calls the real one. */
function counted(path: string, builder: string): Record<string, unknown> {
  const actual = jest.requireActual<Record<string, unknown>>(path);
  const real = actual[builder] as (...args: unknown[]) => unknown;
  return { ...actual, [builder]: jest.fn((...args: unknown[]) => real(...args)) };
}

const builders = {
  createCounters: counters.createCounters,
  createGates: gates.createGates,
  createJobs: jobs.createJobs,
  createSchedules: schedules.createSchedules,
  createSequences: sequences.createSequences,
  createStreams: streams.createStreams,
};
const constructions = (): Record<string, number> =>
  Object.fromEntries(Object.entries(builders).map(([name, builder]) => [name, (builder as unknown as jest.Mock).mock.calls.length]));

/** What the app asked of storage and Service Bus: every request the storage SDKs sent, every client and sender asked for. */
interface Touched {
  readonly requests: string[];
  readonly clients: string[];
  readonly senders: string[];
}

function testApp(touched: Touched = { requests: [], clients: [], senders: [] }): App {
  const config = loadAppConfig({ AzureWebJobsStorage: 'UseDevelopmentStorage=true' });
  let ids = 0;
  const storage = createStorageClients(config.storage, {
    retry: config.storageRetry,
    observe: (service, method, url) => void touched.requests.push(`${service} ${method} ${url}`),
  });
  const senders = serviceBusSenders(undefined);
  return createApp({
    config,
    // Clients are built, never used: nothing below reaches storage (the tests that say so count it).
    storage: {
      ...storage,
      table: (name) => (touched.clients.push(`table ${name}`), storage.table(name)),
      queue: (name) => (touched.clients.push(`queue ${name}`), storage.queue(name)),
      container: (name) => (touched.clients.push(`container ${name}`), storage.container(name)),
    },
    serviceBus: { ...senders, sender: (entity) => (touched.senders.push(entity), senders.sender(entity)) },
    clock: new ManualClock(Date.parse('2026-01-01T00:00:00Z')),
    random: () => 0.5,
    logger: new MemoryLogger(),
    newId: () => `id-${++ids}`,
  });
}

describe('createApp', () => {
  it('builds every service once, with no I/O and no Durable client: each invocation that needs one brings its own', () => {
    const before = constructions();
    const touched: Touched = { requests: [], clients: [], senders: [] };
    const app = testApp(touched);
    expect('durable' in app).toBe(false);
    // Reading the services again builds nothing more.
    for (let i = 0; i < 3; i++) void [app.sequences, app.counters, app.gates.hub, app.schedules, app.jobs, app.streams];
    const built = Object.fromEntries(Object.entries(constructions()).map(([name, n]) => [name, n - (before[name] ?? 0)]));
    expect(built).toEqual(Object.fromEntries(Object.keys(builders).map((name) => [name, 1])));
    expect(touched).toEqual({ requests: [], clients: [], senders: [] });
  });

  it('shuts down without having touched storage or Service Bus', async () => {
    const touched: Touched = { requests: [], clients: [], senders: [] };
    await expect(testApp(touched).shutdown()).resolves.toBeUndefined();
    expect(touched).toEqual({ requests: [], clients: [], senders: [] });
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
