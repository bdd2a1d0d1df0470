/**
 * The security probe of issue #24, replayed as an attacker would with keys on (function key F, admin
 * key A), on the host of the run (the devhost, or the real Functions host in the e2e-real project):
 * every reproduction, each expecting the safe answer. Tests are named after the behaviour they pin.
 *
 * Some reproductions are fixed by work on other branches, and fail on a branch without it: their
 * names end with `[gates work]` (run ids, waiter slots, failed-run output: the gates branch) or
 * `[jobs work]` (deep items, the open-job cap, billing producers: the jobs branch).
 *
 * Not replayed here: a Service Bus SDK message in a 503 detail needs a broker that refuses (the
 * Service Bus SDK retries an unreachable namespace for minutes); test/integration/schedules/serviceBus.test.ts
 * replays it against the fake namespace. The devhost's `/durabletask` API without a key is replayed
 * here against the public port; devhost/test/durable/http.test.ts holds its own listener to it.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { issueCredential } from '../../shared/identity/credentials';
import { defaultRoute, routeWriterKey } from '../../shared/streams/route';
import { legacyFlusherInstanceId } from '../../shared/streams/names';
import type { ScheduleView } from '../../shared/schedules/views';
import { transactions } from '../support/billing';
import { type SelfSigned, selfSignedCert } from '../support/selfSignedCert';
import { devhostTest, type E2eHost, hostLabel, startE2eHost, ownHostTest, describeOwnHost } from './support/harness';
import { expectProblem, type JsonResponse, readableAnswer, requestJson } from './support/http';
import { type JobView, queuesPolledPromptly, settledJob } from './support/jobs';
import { unique } from './support/names';
import { until } from './support/wait';

const readable = (res: JsonResponse): string => readableAnswer(res.headers, res.body);
const soon = (ms: number): string => new Date(Date.now() + ms).toISOString();
const later = '2099-01-01T00:00:00Z';
/** TALLYHO_STREAMS_PARTITIONS as these hosts run it (the default). */
const partitions = 4;

interface StreamWriterView {
  readonly writer: {
    readonly accepted: number;
    readonly flushedThrough: number;
    readonly lastFlush: Record<string, unknown> | null;
    readonly log: Record<string, unknown> | null;
  };
}

function billingJob(count: number, prefix: string) {
  return { processor: 'billing', items: transactions(count, 7, prefix) };
}

/** A JSON value nested `depth` levels deep. */
function nested(depth: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = { d: value };
  return value;
}

async function scheduleRun(host: E2eHost, id: string, done: (run: ScheduleView['runs'][number]) => boolean) {
  return until(
    `a finished run of schedule ${id}`,
    async () => {
      const res = await requestJson<ScheduleView>(host, 'GET', `/api/schedules/${id}/privileged`, { key: 'admin' });
      return res.body.runs.find(done);
    },
    undefined,
    250,
  );
}

/**
 * Sends a chunked body to `path` without a Content-Length, 64 KiB at a time as fast as the server
 * takes it, until the answer arrives or `total` bytes are sent: the status and the bytes it took.
 */
function chunkedUpload(host: E2eHost, path: string, key: string, total: number): Promise<{ status: number; sent: number }> {
  return new Promise((resolve, reject) => {
    const url = new URL(host.url(path));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    let answered = false;
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'x-functions-key': key },
      },
      (res) => {
        answered = true;
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, sent }));
        req.destroy();
      },
    );
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const pump = (): void => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/** Signs the caller credentials of the first probe's host (shared/identity/credentials.ts). */
const credentialsKey = randomBytes(32);

describe(`what a caller with a function key tries, refused (${hostLabel()}, keys on)`, () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost({
      env: {
        TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS: '168.63.129.16',
        TALLYHO_SCHEDULES_POLL_SECONDS: '1',
        TALLYHO_GATES_MAX_WAITERS: '3',
        TALLYHO_CREDENTIALS_KEY: credentialsKey.toString('base64'),
        ...queuesPolledPromptly,
      },
    });
  });
  afterAll(async () => {
    await host.dispose();
  });

  const admin = (method: string, path: string, body?: unknown) =>
    requestJson(host, method, path, { key: 'admin', ...(body === undefined ? {} : { body }) });
  const fn = <T = unknown>(method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    requestJson<T>(host, method, path, {
      key: 'function',
      ...(body === undefined ? {} : { body }),
      ...(headers === undefined ? {} : { headers }),
    });

  /**
   * Appends one event and waits until its writer has flushed it. Not `ack=flushed`: that answer waits
   * a bounded time, and a loaded real host's flusher can take longer (a 503 "buffered but not flushed
   * in time", seen in CI), which is the app's answer, not what these tests are about.
   */
  const appendFlushed = async (type: string, event: Record<string, unknown>): Promise<void> => {
    expect((await fn('POST', `/api/streams/${type}/events`, event)).status).toBe(202);
    await until('the event to be flushed', async () =>
      (await fn<StreamWriterView>('GET', `/api/streams/${type}`)).body.writer.flushedThrough >= 1 ? true : undefined,
    );
  };

  test("a schedule cannot take over a stream writer's flusher: the old flusher id is an ordinary schedule, the new one no schedule id", async () => {
    // The probe's request, as it was: now an ordinary schedule with nothing to take over.
    const probe = { id: 'streams-flusher-p03--billing-invoices', at: later, target: { type: 'queueMessage', queue: 'app-x', message: 1 } };
    // 200: the same schedule is already there (the other host of the run shares the storage and made it).
    expect([200, 201]).toContain((await fn('POST', '/api/schedules', probe)).status);

    // A fresh type whose flusher has not started yet, squatted the same way before its first event.
    const type = unique('squat');
    const key = routeWriterKey(defaultRoute(type, partitions));
    const squat = { id: legacyFlusherInstanceId(key), at: later, target: { type: 'queueMessage', queue: 'app-x', message: 1 } };
    expect((await fn('POST', '/api/schedules', squat)).status).toBe(201);
    // Its flusher still starts and flushes the event.
    await appendFlushed(type, { producer: 'p', seq: 1, data: 'x' });

    // The flusher's own id cannot be a schedule's: a caller's name has no ':'.
    const own = { ...squat, id: `streams:flusher:${key}` };
    expectProblem(await fn('POST', '/api/schedules', own), 400, 'ValidationFailed');
  });

  test("the Durable HTTP API is not on the public port: without a key, raising a gate's release event or reading an instance finds nothing", async () => {
    const raised = await requestJson(host, 'POST', '/durabletask/instances/gate:g:run:r1/raiseEvent/GateReleased', {
      key: 'none',
      body: {},
    });
    expect(raised.status).toBe(404);
    const read = await requestJson(host, 'GET', '/durabletask/instances/gate:g:run:r1', { key: 'none' });
    expect(read.status).toBe(404);
  });

  test("a stream type that normalises to the app's own is refused: a trailing dot is a 400, any case of the ledger's name a 403", async () => {
    const event = { producer: 'mallory', seq: 1, data: { forged: true } };
    const dotted = expectProblem(await fn('POST', '/api/streams/billing-invoices./events', event), 400, 'ValidationFailed');
    expect(dotted.issues).toEqual([{ path: 'params.type', message: expect.stringContaining('not ending with "."') }]);
    for (const type of ['Billing-Invoices', 'BILLING-INVOICES', 'billing-invoices']) {
      expect({ type, status: (await fn('POST', `/api/streams/${type}/events`, event)).status }).toEqual({ type, status: 403 });
    }
    // Every store's name rule is checked at the edge: a gate, a counter or a schedule ending with '.' is refused too.
    expectProblem(await admin('PUT', '/api/gates/launch.', {}), 400, 'ValidationFailed');
    expectProblem(
      await fn('POST', '/api/schedules', { id: 'nightly.', at: later, target: { type: 'queueMessage', queue: 'app-x', message: 1 } }),
      400,
    );
  });

  test('a job item nested past what its envelope can carry does not kill its job: refused at submit, or recorded as failed while the rest run [jobs work]', async () => {
    const items = [...transactions(3, 3, 'deep'), { ...transactions(1, 4, 'deeper')[0], metadata: nested(61) }];
    const submitted = await fn<{ id: string }>('POST', '/api/jobs', { processor: 'billing', items });
    if (submitted.status === 400 || submitted.status === 413) {
      expect(readable(submitted)).toContain('items.3');
      return;
    }
    expect(submitted.status).toBe(202);
    const job = await settledJob(host, submitted.body.id, 60_000);
    expect(job.totals).toMatchObject({ items: 4, succeeded: 3, failed: 1, pending: 0 });
  });

  test("the app's own job keys cannot be taken: a caller who sends a schedule run's or a gated run's old key first gets a job of its own, and the run's job still runs", async () => {
    const id = unique('keyed');
    const items = transactions(2, 5, id);
    // The squatter goes first, with the key the run would have used before.
    const squatter = await fn<{ id: string }>('POST', '/api/jobs', billingJob(1, `${id}-x`), { 'idempotency-key': `${id}#1` });
    expect(squatter.status).toBe(202);
    // The app's own form is out of any caller's reach: a key with a space is no Idempotency-Key.
    expectProblem(
      await fn('POST', '/api/jobs', billingJob(1, `${id}-y`), { 'idempotency-key': `schedule-run ${id}#1` }),
      400,
      'ValidationFailed',
    );
    expect((await fn('POST', '/api/schedules', { id, at: soon(3000), target: { type: 'job', processor: 'billing', items } })).status).toBe(
      201,
    );
    const run = await scheduleRun(host, id, (r) => r.outcome === 'succeeded' || r.outcome === 'failed');
    expect(run).toMatchObject({ outcome: 'succeeded' });
    expect(run.detail ?? '').not.toContain(squatter.body.id);

    // The same for a gated run's job action.
    const gate = unique('keyedgate');
    expect((await admin('PUT', `/api/gates/${gate}`, {})).status).toBe(201);
    const action = { type: 'job', processor: 'billing', items: transactions(2, 6, gate) };
    expect((await fn('POST', `/api/gates/${gate}/runs`, { runId: 'r1', action })).status).toBe(202);
    const gateSquatter = await fn<{ id: string }>('POST', '/api/jobs', billingJob(1, `${gate}-x`), {
      'idempotency-key': `gate-run:${gate}:r1`,
    });
    expect(gateSquatter.status).toBe(202);
    expect((await admin('POST', `/api/gates/${gate}/release`, { by: 'ops' })).status).toBe(200);
    const jobId = await until('the gated run to submit its job', async () => {
      const status = await fn('GET', `/api/gates/${gate}/runs/r1`);
      return /"jobId":"([^"]+)"/.exec(JSON.stringify(status.body))?.[1];
    });
    expect(jobId).not.toBe(gateSquatter.body.id);
    expect((await settledJob(host, jobId)).state).toBe('completed');
  });

  // The real Functions host answers this upload 500 (the worker's early 413 fails its forwarding):
  // devhost/docs/real-host.md#request-body-limit; test/e2e/bodyLimits.test.ts pins the bytes it takes on every host.
  devhostTest(
    'a body is counted while it arrives: 300 MiB chunked to a 1 KiB route is a 413 long before it is sent',
    async () => {
      const type = unique('big');
      const { status, sent } = await chunkedUpload(host, `/api/streams/${type}/route`, host.keys.admin ?? '', 300 * 1024 * 1024);
      expect(status).toBe(413);
      // What socket buffers hold on the way, nowhere near the 300 MiB (the probe saw +900 MB of RSS).
      expect(sent).toBeLessThan(64 * 1024 * 1024);
      // The host is still well.
      expect((await requestJson(host, 'GET', '/api/health', { key: 'none' })).status).toBe(200);
    },
    undefined,
    'request stream (the app reads the body as it arrives)',
  );

  test('a schedule an admin made is read with the admin key: a function key holder, not its owner, is told there is no such schedule', async () => {
    const id = unique('ops');
    const target = { type: 'queueMessage', queue: 'app-ops', message: { apiToken: 'sk-live-0123456789' } };
    expect((await admin('POST', '/api/schedules/privileged', { id, at: later, target, by: 'ops' })).status).toBe(201);
    const asFunction = await fn<ScheduleView>('GET', `/api/schedules/${id}`);
    expectProblem(asFunction, 404, 'NotFound');
    expect(readable(asFunction)).not.toContain('sk-live-0123456789');
    const asAdmin = await admin('GET', `/api/schedules/${id}/privileged`);
    expect((asAdmin.body as ScheduleView).target).toEqual(target);
    // The admin read needs the admin key.
    expect((await fn('GET', `/api/schedules/${id}/privileged`)).status).toBe(401);
  });

  test('a function key cannot schedule a cron that fires every second; an admin can', async () => {
    const body = { cron: '* * * * * *', target: { type: 'queueMessage', queue: 'app-x', message: 1 } };
    const refused = expectProblem(await fn('POST', '/api/schedules', { id: unique('spin'), ...body }), 400, 'ValidationFailed');
    expect(refused.issues).toEqual([
      { path: 'body.cron', message: expect.stringContaining('TALLYHO_SCHEDULES_MIN_CRON_INTERVAL_SECONDS') },
    ]);
    expect((await fn('POST', '/api/schedules', { id: unique('minutely'), ...body, cron: '0 * * * * *' })).status).toBe(201);
    const id = unique('ops-spin');
    expect((await admin('POST', '/api/schedules/privileged', { id, ...body })).status).toBe(201);
    expect((await admin('DELETE', `/api/schedules/${id}`)).status).toBe(200);
  });

  test('page links come from the route, not the request path: no page links another origin', async () => {
    for (const path of ['//evil.example/api/console', '//evil.example/api/docs', '/API/Console', '/api/console/', '/Api/Docs']) {
      const res = await fetch(host.url(path));
      const text = await res.text();
      expect({ path, evil: text.includes('evil.example') }).toEqual({ path, evil: false });
      if (res.status === 200 && text.includes('<script')) {
        const links = [...text.matchAll(/(?:src|href|content)="(\/[^"]*)"/g)].map((m) => m[1] ?? '');
        expect({ path, links: links.filter((l) => l !== '/api' && !l.startsWith('/api/')) }).toEqual({ path, links: [] });
      }
    }
  });

  test('a second start of a run id with another action is a 409, not the first action run for the second starter [gates work]', async () => {
    const gate = unique('runs');
    expect((await admin('PUT', `/api/gates/${gate}`, {})).status).toBe(201);
    expect((await fn('POST', `/api/gates/${gate}/runs`, { runId: 'r1', action: { type: 'none' } })).status).toBe(202);
    const again = await fn('POST', `/api/gates/${gate}/runs`, { runId: 'r1', action: { type: 'enqueue', payload: { mine: true } } });
    expectProblem(again, 409, 'Conflict');
  });

  test("a run's status answers its documented shape only, never Durable output [gates work]", async () => {
    const gate = unique('shape');
    expect((await admin('PUT', `/api/gates/${gate}`, {})).status).toBe(201);
    expect((await fn('POST', `/api/gates/${gate}/runs`, { runId: 'r1' })).status).toBe(202);
    expect((await admin('POST', `/api/gates/${gate}/release`, { by: 'ops' })).status).toBe(200);
    const status = await until('the run to proceed', async () => {
      const res = await fn<Record<string, unknown>>('GET', `/api/gates/${gate}/runs/r1`);
      return res.body.state === 'proceeded' ? res : undefined;
    });
    expect(Object.keys(status.body)).not.toEqual(expect.arrayContaining(['output']));
    expect(readable(status)).not.toMatch(/RpcException|\bat .*\.js|\/home\/|\/work\//);
  });

  // This and the wire-server test need settings of their own (TALLYHO_GATES_MAX_WAITERS, the allow-list).
  ownHostTest("a gate's waiter slots are refused at start with 429 when full [gates work]", async () => {
    const gate = unique('slots');
    expect((await admin('PUT', `/api/gates/${gate}`, {})).status).toBe(201);
    // A caller's share of 3 places is one (docs/security.md, "Fair shares"): three callers fill the generation.
    const as = async (name: string): Promise<Record<string, string>> => ({
      authorization: `Bearer ${(await issueCredential(credentialsKey, { name: `${gate}-${name}`, roles: { admin: false, submitter: true, workerOf: [] } })).credential}`,
    });
    for (const runId of ['w1', 'w2', 'w3'])
      expect((await fn('POST', `/api/gates/${gate}/runs`, { runId }, await as(runId))).status).toBe(202);
    expectProblem(await fn('POST', `/api/gates/${gate}/runs`, { runId: 'w4' }, await as('w4')), 429, 'TooManyRequests');
  });

  // Tallyho credentials signed with this file's key: an app of its own, configured with that key.
  ownHostTest(
    "one caller cannot lock new producers out of a stream: past its share its new producers wait, another identity's get in",
    async () => {
      const type = unique('fair');
      const producers = (from: number, count: number) => ({
        events: Array.from({ length: count }, (_, i) => ({ producer: `m-${from + i}`, seq: 1 })),
      });
      // The probe's flood: requests of fresh producers from one function key.
      expect((await fn('POST', `/api/streams/${type}/events`, producers(0, 250))).status).toBe(202);
      const flooded = expectProblem(await fn('POST', `/api/streams/${type}/events`, producers(250, 250)), 429, 'TooManyRequests');
      expect(flooded.detail).toContain('TALLYHO_STREAMS_MAX_PRODUCERS_PER_CALLER');
      // The same key in another spelling, or beside a junk one, is the same caller (the quota counts
      // identities, never key text): `?CODE=`, and a second x-functions-key header.
      const sameKey = encodeURIComponent(host.keys.function ?? host.keys.admin ?? '');
      expectProblem(
        await requestJson(host, 'POST', `/api/streams/${type}/events?CODE=${sameKey}`, { key: 'none', body: producers(500, 1) }),
        429,
      );
      // Known producers go on; another identity (its own credential) still gets a place.
      expect((await fn('POST', `/api/streams/${type}/events`, { producer: 'm-0', seq: 2 })).status).toBe(202);
      const other = await issueCredential(credentialsKey, { name: 'producer-b', roles: { admin: false, submitter: true, workerOf: [] } });
      const asOther = { authorization: `Bearer ${other.credential}` };
      expect((await fn('POST', `/api/streams/${type}/events`, { producer: 'b-1', seq: 1 }, asOther)).status).toBe(202);
    },
  );

  test('a function-level stream read names no blobs; the admin read does', async () => {
    const type = unique('where');
    await appendFlushed(type, { producer: 'p', seq: 1 });
    const asFunction = await fn<StreamWriterView>('GET', `/api/streams/${type}`);
    expect(asFunction.body.writer.log).toEqual({ position: expect.any(Number), blocks: expect.any(Number) });
    expect(asFunction.body.writer.lastFlush).not.toHaveProperty('blob');
    expect(readable(asFunction)).not.toMatch(/\.ndjson|"container"/);
    const asAdmin = (await admin('GET', `/api/streams/${type}/privileged`)).body as StreamWriterView;
    expect(asAdmin.writer.log).toMatchObject({
      container: 'streams',
      blob: expect.stringMatching(new RegExp(`/${type}/000000\\.ndjson$`)),
    });
  });

  ownHostTest("Azure's wire server (168.63.129.16) is no webhook target, even when allow-listed", async () => {
    for (const url of ['https://168.63.129.16/machine?comp=goalstate', 'https://168.63.129.16:443/']) {
      const refused = expectProblem(
        await fn('POST', '/api/schedules', { id: unique('wire'), at: later, target: { type: 'webhook', url } }),
        400,
      );
      expect(refused.issues).toEqual([{ path: 'body.target.url', message: '168.63.129.16 is not a public address' }]);
    }
  });
});

// Tight caps and a webhook allow-list: settings of its own.
describeOwnHost(`what a caller with a function key tries against tight caps and a webhook, refused (${hostLabel()}, keys on)`, () => {
  let tls: SelfSigned;
  const caFile = join(tmpdir(), `tallyho-probe-ca-${randomBytes(4).toString('hex')}.pem`);
  const secret = 'db.internal:5432 password=hunter2 at Object.<anonymous> (/srv/app/index.js:1:1)';
  let server: Server;
  let host: E2eHost;
  let port = 0;

  beforeAll(async () => {
    tls = await selfSignedCert(['localhost']);
    writeFileSync(caFile, tls.cert);
    server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(500, { 'content-type': 'text/plain' }).end(secret));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    host = await startE2eHost({
      env: {
        NODE_EXTRA_CA_CERTS: caFile,
        TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS: `localhost:${port}`,
        TALLYHO_SCHEDULES_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
        TALLYHO_JOBS_MAX_OPEN: '10',
        TALLYHO_STREAMS_MAX_PRODUCERS: '3',
        TALLYHO_STREAMS_MAX_PRODUCERS_PER_CALLER: '3',
        ...queuesPolledPromptly,
      },
    });
  });
  afterAll(async () => {
    await host.dispose();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test("a failed webhook's answer is not shown to function-level readers: they see the status, the admin the body", async () => {
    const id = unique('hook');
    const target = { type: 'webhook', url: `https://localhost:${port}/hook` };
    expect((await requestJson(host, 'POST', '/api/schedules', { body: { id, at: soon(2000), target } })).status).toBe(201);
    await scheduleRun(host, id, (r) => r.outcome === 'failed');
    const asFunction = await requestJson<ScheduleView>(host, 'GET', `/api/schedules/${id}`);
    expect(asFunction.body.runs.find((r) => r.outcome === 'failed')?.reason).toBe('HTTP 500');
    expect(readable(asFunction)).not.toMatch(/hunter2|db\.internal|index\.js/);
    const asAdmin = await requestJson<ScheduleView>(host, 'GET', `/api/schedules/${id}/privileged`, { key: 'admin' });
    expect(asAdmin.body.runs.find((r) => r.outcome === 'failed')?.reason).toContain('hunter2');
  });

  test("ordinary billing traffic does not stop billing: the app's own ledger producers take no caller's place [jobs work]", async () => {
    // Each billing job delivers as a producer of its own; with three places, the fourth job found none.
    const jobs: JobView[] = [];
    for (let i = 0; i < 5; i++) {
      const submitted = await requestJson<{ id: string }>(host, 'POST', '/api/jobs', { body: billingJob(2, `bill${i}`) });
      expect(submitted.status).toBe(202);
      jobs.push(await settledJob(host, submitted.body.id, 60_000));
    }
    expect(jobs.map((j) => j.state)).toEqual(['completed', 'completed', 'completed', 'completed', 'completed']);
  });

  test('the open-job cap is exact under concurrency: 60 submissions at once against a cap of 10 [jobs work]', async () => {
    // The burst's jobs go to an external processor no worker leases, so none can settle during the
    // burst and give its place to a later submission: billing jobs did, on a loaded machine more than
    // ten were accepted one after another while never more than ten were open.
    const parked = unique('parked');
    expect((await requestJson(host, 'PUT', `/api/processors/${parked}`, { key: 'admin', body: { type: 'external' } })).status).toBe(201);
    // Each submission as a client makes it: with an Idempotency-Key, and asked again after Retry-After
    // when the app answers 503 (its storage did not answer in time: a busy machine's Azurite), so a
    // retried submission that had in fact been stored is the same job, not a second one.
    const submit = async (i: number): Promise<{ status: number; id?: string }> => {
      const key = `${parked}-burst${i}`;
      for (;;) {
        const res = await requestJson<{ id?: string }>(host, 'POST', '/api/jobs', {
          body: { processor: parked, items: transactions(200, 7, `burst${i}`) },
          headers: { 'idempotency-key': key },
        });
        if (res.status !== 503) return { status: res.status, ...(res.body.id === undefined ? {} : { id: res.body.id }) };
        await sleep(Number(res.headers.get('retry-after') ?? '1') * 1000);
      }
    };
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => submit(i)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s !== 202 && s !== 429)).toEqual([]);
    const accepted = new Set(answers.filter((a) => a.status === 202).map((a) => a.id));
    expect(accepted.size).toBeLessThanOrEqual(10);
    expect(accepted.size).toBeGreaterThan(0);
  });
});
