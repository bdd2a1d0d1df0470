/**
 * The calls that broke on the real Functions host (devhost/docs/real-host.md),
 * over HTTP: every streams and jobs route with query strings and single-event bodies, whose query
 * and top-level body fields the real host (and now the devhost) also hands the app as
 * `request.params`; stream appends and flushes that need the writer's ledger (an entity signalled by
 * another entity, #entity-ids there); billing delivery; and `?code=` on the nine routes whose strict query schemas
 * once refused it (security finding 8). Against an external host (`E2E_BASE_URL`) the same calls
 * check the real thing.
 */
import { TableClient } from '@azure/data-tables';

import { transactions } from '../support/billing';
import { until } from '../support/waits';
import { type E2eHost, ownHostTest, realHostTest, startE2eHost, storageOf } from './support/harness';
import { type JobView, settledJob, queuesPolledPromptly } from './support/jobs';
import { expectProblem, requestJson } from './support/http';
import { unique } from './support/names';
import { readAll } from './support/pages';
import { post, postFlushed, remap } from './support/streams';

describe('the routes that broke on the real host', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost({
      env: {
        TALLYHO_STREAMS_FLUSH_INTERVAL_MS: '200',
        ...queuesPolledPromptly,
        TALLYHO_JOBS_QUEUE_PREFIX: unique('rh'),
      },
    });
  });
  afterAll(async () => {
    await host.dispose();
  });

  ownHostTest("a server fault's logged stack names the TypeScript sources, as the bundle's map gives them", async () => {
    // A gate row nothing could have written: reading it is a server fault (CorruptState), logged with its stack.
    const name = unique('corrupt');
    const gates = TableClient.fromConnectionString(storageOf(host), 'gates', { allowInsecureConnection: true });
    await gates.createTable();
    await gates.upsertEntity({ partitionKey: name, rowKey: 'gate', name: 5 });
    expectProblem(await requestJson(host, 'GET', `/api/gates/${name}`), 500, 'CorruptState');
    const line = await until('the fault in the log', () =>
      host
        .output()
        .split('\n')
        .find((l) => l.includes('"event":"http.unhandled"') && l.includes(`gate \\"${name}\\"`)),
    );
    // The frames of the app's own code name its sources (the bundle's map, read when the module
    // loaded), never a position in the bundle: with the code cache (scripts/app-entry.cjs) a
    // script kept the path it was built at, which matched no map (real host 4.1037, Node 20).
    expect(line).toMatch(/at gateRecordOf \([^)]*[/\\]shared[/\\]gates[/\\]rows\.ts:\d+:\d+\)/);
    expect(line).not.toMatch(/tallyho\.js:\d+:\d+/);
  });

  realHostTest(
    'the Durable Task Framework writes warnings only (host.json), while the entities it runs still log',
    async () => {
      const type = unique('quiet');
      expect((await postFlushed(host, type, { producer: 'p', seq: 1 })).status).toBe(200);
      const output = host.output();
      // The writer entity ran here (its host lines), and the framework under it wrote no Information
      // line: as shipped, host.json's default let through some 50,000 of them in a CI run.
      expect(output).toMatch(/^info: Function\.streamwriter\b/m);
      expect(output).not.toMatch(/^info: DurableTask\.(Core|AzureStorage)\b/m);
    },
    'Durable Task Framework',
  );

  test('?code= is accepted on every route (the host key is never an app query value)', async () => {
    const code = '?code=not-an-app-value';
    for (const path of ['/api/counters', '/api/gates', '/api/jobs', '/api/sequences', '/api/streams', '/api/schedules']) {
      // Operator lists (admin level): the key travels in the header, so `code` is an app query value here.
      const res = await requestJson(host, 'GET', `${path}${code}&maxPageSize=5`, { key: 'admin' });
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
    // An unknown job: the query passed validation, the job did not.
    for (const part of ['results', 'failures']) {
      expectProblem(await requestJson(host, 'GET', `/api/jobs/20260101000000-0000000000/${part}${code}&maxPageSize=5`), 404, 'NotFound');
    }
    const type = unique('code');
    const appended = await post(host, type, { producer: 'p', seq: 1 }, code);
    expect(appended.status).toBe(202);
  });

  test('streams: a single-event body with ?ack=flushed, ?wait=, the route PUT and flush all answer (real host: 400 params, then 503 from the writer)', async () => {
    const type = unique('rh-orders');
    // The README's single-event body: its producer and seq were params on the real host.
    const buffered = await post(host, type, { producer: 'checkout-7', seq: 1, data: { order: 'ORD-1' } });
    expect(buffered.status).toBe(202);
    expect(buffered.body).toMatchObject({ type, accepted: 1, ack: 'buffered' });
    const flushed = await postFlushed(host, type, { producer: 'checkout-7', seq: 2 }, '&wait=true');
    expect(flushed.status).toBe(200);
    expect(flushed.body).toMatchObject({ accepted: 1, ack: 'flushed', flushed: true });
    // A body field named like the route value cannot replace it: the event type is the route's.
    expectProblem(await post(host, type, { producer: 'checkout-7', seq: 3, type: 'other' }), 400, 'ValidationFailed');
    const remapped = await remap(host, type, { partition: 'p09', resource: `${type}-2` });
    expect(remapped.first.body).toMatchObject({ type, changed: true });
    expect(remapped.done.status).toBe(200);
    const after = await postFlushed(host, type, { producer: 'checkout-7', seq: 3 });
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ partition: 'p09', resource: `${type}-2`, flushed: true });
    const flush = await requestJson<{ flushed: boolean }>(host, 'POST', `/api/streams/${type}/flush?code=x`, { key: 'admin' });
    expect(flush.status).toBe(200);
    expect(flush.body.flushed).toBe(true);
    const listed = await readAll<{ type: string }>(host, '/api/streams', { key: 'admin' });
    expect(listed.map((i) => i.type)).toContain(type);
    expect((await requestJson(host, 'GET', `/api/streams/${type}?limit=1`)).status).toBe(200);
  });

  test('jobs: a billing job reaches "delivered"; results, failures, files and retry-failed answer with query strings', async () => {
    const items = transactions(20, 3, 'rh');
    const accepted = await requestJson<JobView>(host, 'POST', '/api/jobs?code=x', { body: { processor: 'billing', items } });
    expect(accepted.status).toBe(202);
    const id = accepted.body.id;
    const job = await settledJob(host, id);
    // The ledger entity answered the writer's report (real host: stayed "pending", devhost/docs/real-host.md#entity-ids).
    expect(job).toMatchObject({ state: 'completed', delivery: 'delivered', totals: { items: 20, succeeded: 20, failed: 0 } });
    const page = await requestJson<{ items: { status: string }[] }>(
      host,
      'GET',
      `/api/jobs/${id}/results?maxPageSize=500&status=succeeded`,
    );
    expect(page.status).toBe(200);
    expect(page.body.items).toHaveLength(20);
    const failedOnly = await requestJson<{ items: unknown[] }>(host, 'GET', `/api/jobs/${id}/results?status=failed`);
    expect(failedOnly.status).toBe(200);
    expect(failedOnly.body).toEqual({ items: [] });
    const failures = await requestJson<{ items: unknown[] }>(host, 'GET', `/api/jobs/${id}/failures?maxPageSize=50`);
    expect(failures.status).toBe(200);
    const invoice = await requestJson<string>(host, 'GET', `/api/jobs/${id}/files/invoice.csv?code=x`);
    expect(invoice.status).toBe(200);
    // Reached the handler (real host: 503 after 30 s, the delivery never finishing): nothing failed to retry.
    expectProblem(await requestJson(host, 'POST', `/api/jobs/${id}/retry-failed?code=x`, { key: 'admin' }), 409, 'Conflict');
  });
});
