/**
 * Telemetry through a host: the app and the host export to an OTLP collector (a receiver in this test
 * process) with the settings docs/operations.md gives (OTEL_EXPORTER_OTLP_ENDPOINT and
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf). Every request is one trace whose root is the host's
 * server span, a child of the caller's `traceparent`; the app's spans hang below it and continue
 * across queue messages (job envelopes, gate actions), the streams writer (append → flush, linked) and
 * a schedule's trigger; the HTTP, jobs and streams metrics arrive with bounded attributes; and nothing
 * sent holds a key or an item. With TELEMETRY_TRACE_OUT set, the gated job's whole trace is written
 * there as received (the closing note of issue #40).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { QueueClient } from '@azure/storage-queue';

import { transactions } from '../support/billing';
import { type FaultProxy, startFaultProxy } from '../support/faultProxy';
import { claimHostStorage } from '../support/storageAccounts';
import { type OtlpReceiver, type ReceivedPoint, type ReceivedSpan, startOtlpReceiver } from '../support/otlpReceiver';
import { type E2eHost, hostKind, startE2eHost, storageOf } from './support/harness';
import { requestJson } from './support/http';
import { heldLeaseSeconds, settledJob, queuesPolledPromptly } from './support/jobs';
import { unique } from './support/names';
import { flush, post, remap } from './support/streams';
import { until } from './support/wait';

const external = hostKind() === 'external';
const describeOwnHost = external ? describe.skip : describe;

describeOwnHost(`telemetry to an OTLP collector${external ? ' [skipped: needs a host of its own; E2E_BASE_URL is set]' : ''}`, () => {
  let receiver: OtlpReceiver;
  let host: E2eHost;
  // The host's storage goes through a fault proxy (passing everything until a test sets a rule): a
  // request answered 5xx because storage fails is measured like any other.
  let proxy: FaultProxy;
  const prefix = unique('tq');
  const serviceName = 'tallyho-e2e';
  // A webhook processor's endpoint: plain http on loopback (allowed with private addresses, for local development).
  let endpoint: Server;
  const pushed: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    endpoint = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        pushed.push(req.headers);
        const batch = JSON.parse(text) as { items: { id: string }[] };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ results: batch.items.map((i) => ({ id: i.id, status: 'succeeded', output: {} })) }));
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const endpointPort = (endpoint.address() as AddressInfo).port;
    proxy = await startFaultProxy(claimHostStorage());
    host = await startE2eHost({
      env: {
        AzureWebJobsStorage: proxy.connectionString,
        TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS: `localhost:${endpointPort}`,
        TALLYHO_SCHEDULES_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=e2e',
        // As docs/operations.md's step-by-step says: without it the real host's spans say `unknown_service:dotnet`, the app's `tallyho`.
        OTEL_SERVICE_NAME: serviceName,
        OTEL_METRIC_EXPORT_INTERVAL: '1000',
        // Spans leave in batches every 500 ms, not the SDK's 5 s (OTEL_BSP_SCHEDULE_DELAY, the OpenTelemetry
        // SDK environment variable the JS BatchSpanProcessor and the host's .NET exporter read): each
        // test waits for its trace's spans to arrive, and waited out about 5 s of batching each.
        OTEL_BSP_SCHEDULE_DELAY: '500',
        // Its own queue count (below) wins over the one of queuesPolledPromptly.
        ...queuesPolledPromptly,
        TALLYHO_TELEMETRY_CALLER_NAMES: 'telemetry-*',
        TALLYHO_JOBS_QUEUE_PREFIX: prefix,
        TALLYHO_JOBS_QUEUES: '2',
        // Long enough that appended events stay buffered until the streams test flushes them (its depth reads N, then 0).
        TALLYHO_STREAMS_FLUSH_INTERVAL_MS: '600000',
      },
    });
  });
  afterAll(async () => {
    await host.dispose();
    await proxy.close();
    await receiver.close();
    endpoint.closeAllConnections();
    await new Promise((resolve) => endpoint.close(resolve));
  });

  const spansOf = (traceId: string): ReceivedSpan[] => receiver.spans.filter((s) => s.traceId === traceId);
  const points = (metric: string): ReceivedPoint[] => receiver.points.filter((p) => p.metric === metric);
  const newTrace = (): { traceId: string; parent: string; traceparent: string } => {
    const traceId = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    return { traceId, parent, traceparent: `00-${traceId}-${parent}-01` };
  };
  /** The host's server span of the request to `functionName` in the trace: the root below the caller's span. */
  const hostSpan = (spans: readonly ReceivedSpan[], functionName: string, parent: string): ReceivedSpan | undefined =>
    spans.find((s) => s.kind === 'server' && s.attributes['faas.name'] === functionName && s.parentSpanId === parent);
  /** Every span of the trace whose parent is not in it either is the root (the caller's span id) or is missing one. */
  const orphans = (spans: readonly ReceivedSpan[], root: string): ReceivedSpan[] => {
    const ids = new Set(spans.map((s) => s.spanId));
    return spans.filter((s) => s.parentSpanId !== undefined && s.parentSpanId !== root && !ids.has(s.parentSpanId));
  };
  // Spans leave in batches (every 500 ms here), so a child can arrive before its parent: a trace is
  // whole once every span's parent has arrived. One that never does (a broken tree) keeps this waiting
  // until the test's timeout, which reports it.
  const wholeTrace = (traceId: string, root: string): Promise<ReceivedSpan[]> =>
    until('every span of the trace with its parent (no orphans)', () => {
      const spans = spansOf(traceId);
      return Promise.resolve(orphans(spans, root).length === 0 ? spans : undefined);
    });

  test('a plain request is one trace: the host’s server span, a child of the caller’s, with the attributes the real host sets', async () => {
    const name = unique('telemetry-plain');
    expect((await requestJson(host, 'PUT', `/api/sequences/${name}`, { body: {}, key: 'admin' })).status).toBe(201);
    const { traceId, parent, traceparent } = newTrace();
    expect((await requestJson(host, 'POST', `/api/sequences/${name}/next`, { body: { count: 1 }, headers: { traceparent } })).status).toBe(
      200,
    );
    const root = await until(
      'the host’s span of the request',
      () => Promise.resolve(hostSpan(spansOf(traceId), 'sequencesNext', parent)),
      30_000,
    );
    expect(root).toMatchObject({
      name: 'POST',
      scope: 'Microsoft.AspNetCore',
      encoding: 'protobuf',
      attributes: {
        'http.request.method': 'POST',
        'url.scheme': 'http',
        'url.path': `/api/sequences/${name}/next`,
        'faas.name': 'sequencesNext',
        'faas.trigger': 'http',
        'http.response.status_code': 200,
      },
    });
    expect(root.resource['deployment.environment.name']).toBe('e2e');
    // The host's spans and the app's carry the one service.name OTEL_SERVICE_NAME gives.
    expect(root.resource['service.name']).toBe(serviceName);
    // The app's resource carries the same operator attributes, its version and the SDK's.
    const app = await until('a metric point of the app', () =>
      Promise.resolve(receiver.points.find((p) => p.metric.startsWith('tallyho.'))),
    );
    expect(app.resource).toMatchObject({
      'service.name': serviceName,
      'deployment.environment.name': 'e2e',
      'service.version': expect.stringMatching(/^\d+\.\d+\.\d+/) as unknown,
      'telemetry.sdk.language': 'nodejs',
    });
    // Every span received so far says it too: the host's (its own Azure SDK and listener spans included) and the app's.
    expect([...new Set(receiver.spans.map((s) => s.resource['service.name']))]).toEqual([serviceName]);
  });

  test('a counter’s increment and read are each one trace: the host’s server span below the caller’s', async () => {
    const name = unique('telemetry-counter');
    expect((await requestJson(host, 'PUT', `/api/counters/${name}`, { body: { mode: 'hits' }, key: 'admin' })).status).toBe(201);
    for (const [method, path, functionName] of [
      ['POST', `/api/counters/${name}/increment`, 'countersIncrement'],
      ['GET', `/api/counters/${name}`, 'countersGet'],
    ] as const) {
      const { traceId, parent, traceparent } = newTrace();
      const answered = await requestJson(host, method, path, {
        headers: { traceparent },
        ...(method === 'POST' ? { body: { by: 1 } } : {}),
      });
      expect(answered.status).toBeLessThan(300);
      const root = await until(
        `the host’s span of ${functionName}`,
        () => Promise.resolve(hostSpan(spansOf(traceId), functionName, parent)),
        30_000,
      );
      expect(root).toMatchObject({ name: method, attributes: { 'url.path': path, 'http.response.status_code': answered.status } });
      await wholeTrace(traceId, parent);
    }
  });

  test('a callers request is one trace: the host’s server span below the caller’s', async () => {
    const { traceId, parent, traceparent } = newTrace();
    const answered = await requestJson(host, 'GET', '/api/callers/me', { headers: { traceparent } });
    expect(answered.status).toBe(200);
    const root = await until(
      'the host’s span of callersMe',
      () => Promise.resolve(hostSpan(spansOf(traceId), 'callersMe', parent)),
      30_000,
    );
    expect(root).toMatchObject({ name: 'GET', attributes: { 'url.path': '/api/callers/me', 'http.response.status_code': 200 } });
    await wholeTrace(traceId, parent);
  });

  test('a job is one trace that continues the caller’s: submission, every envelope, completion', async () => {
    const traceId = randomBytes(16).toString('hex');
    const items = transactions(40, 7, 'tel');
    const submitted = await requestJson<{ id: string; envelopes: { count: number } }>(host, 'POST', '/api/jobs', {
      body: { processor: 'billing', items },
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    });
    expect(submitted.status).toBe(202);
    const job = await settledJob(host, submitted.body.id);
    const spans = await until(
      'the job’s spans at the collector',
      () => {
        const found = spansOf(traceId);
        const done = found.some((s) => s.name === 'tallyho.job.complete');
        return Promise.resolve(done ? found : undefined);
      },
      30_000,
    );
    const names = spans.map((s) => s.name);
    expect(names.filter((n) => n === 'tallyho.job.submit')).toHaveLength(1);
    // Every envelope is processed in the job's trace. Delivery is at least once: a delivery that failed
    // (on a busy machine, storage calls that timed out) is delivered again, as another span of the
    // same envelope.
    const processed = spans.filter((s) => s.name === 'tallyho.job.process');
    expect(new Set(processed.map((s) => s.attributes['tallyho.job.envelope.id'])).size).toBe(job.envelopes.count);
    expect(processed.length).toBeGreaterThanOrEqual(job.envelopes.count);
    const submit = spans.find((s) => s.name === 'tallyho.job.submit');
    // The messaging conventions' operations: the submission sends the envelopes, each delivery processes one.
    expect(submit?.attributes).toEqual({
      'tallyho.job.id': job.id,
      'tallyho.job.processor': 'billing',
      'messaging.operation.type': 'send',
    });
    // The submission's parent is the host's span of the request, whose parent is the caller's.
    const root = await until(
      'the host’s span of the submission',
      () => Promise.resolve(spansOf(traceId).find((s) => s.spanId === submit?.parentSpanId)),
      30_000,
    );
    expect(root).toMatchObject({ kind: 'server', attributes: { 'faas.name': 'jobsSubmit' } });
    // Each delivery is a child of the submission. The host gives a queue invocation no trace context
    // of its own (devhost/docs/real-host.md#trace-context): the envelope's traceparent is the only tie.
    for (const process of processed) {
      expect(process.parentSpanId).toBe(submit?.spanId);
      expect(process.attributes['messaging.operation.type']).toBe('process');
      expect(process.links).toEqual([]);
    }
    const sent = receiver.bodies.join('\n');
    for (const item of items) expect(sent).not.toContain(item.id);
    for (const key of [host.keys.function, host.keys.admin]) if (key !== undefined) expect(sent).not.toContain(key);
  });

  test('a webhook push continues the job’s trace: a tallyho.job.push span below the submission, its traceparent header at the endpoint', async () => {
    const port = (endpoint.address() as AddressInfo).port;
    const processor = unique('telemetry-hook');
    const declared = await requestJson(host, 'PUT', `/api/processors/${processor}`, {
      body: { type: 'webhook', url: `http://localhost:${port}/hook`, batchSize: 5 },
      key: 'admin',
    });
    expect(declared.status).toBe(201);
    const { traceId, traceparent } = newTrace();
    const submitted = await requestJson<{ id: string }>(host, 'POST', '/api/jobs', {
      body: { processor, items: Array.from({ length: 10 }, (_, i) => ({ id: `p-${i}` })) },
      headers: { traceparent },
    });
    expect(submitted.status).toBe(202);
    const spans = await until(
      'the job’s push spans at the collector',
      () => {
        const found = spansOf(traceId);
        return Promise.resolve(found.filter((s) => s.name === 'tallyho.job.push').length === 2 ? found : undefined);
      },
      60_000,
    );
    const submit = spans.find((s) => s.name === 'tallyho.job.submit');
    const pushes = spans.filter((s) => s.name === 'tallyho.job.push');
    for (const push of pushes) {
      expect(push).toMatchObject({ kind: 'producer', parentSpanId: submit?.spanId });
      expect(push.attributes).toMatchObject({ 'tallyho.job.id': submitted.body.id, 'tallyho.job.processor': processor });
    }
    // The endpoint saw each push span's own context (before: no traceparent header at all).
    const headers = pushed.filter((h) => typeof h['webhook-id'] === 'string' && h['webhook-id'].startsWith(submitted.body.id));
    expect(headers.map((h) => h.traceparent).sort()).toEqual(pushes.map((p) => `00-${traceId}-${p.spanId}-01`).sort());
    // The pushed items' outcomes are counted as an in-app processor's are (before: a declared processor's showed nothing).
    await until(
      'the pushed items counted as succeeded',
      () =>
        Promise.resolve(
          points('tallyho.job.items').find(
            (p) => p.attributes['tallyho.job.processor'] === processor && p.attributes['tallyho.outcome'] === 'succeeded' && p.value === 10,
          ),
        ),
      30_000,
    );
  });

  test('a declared processor’s gauges move with its queue: backlog, leased envelopes, oldest envelope’s age; a lease is traced as a receive linked to the job', async () => {
    const processor = unique('telemetry-ext');
    expect(
      (
        await requestJson(host, 'PUT', `/api/processors/${processor}`, {
          body: { type: 'external', batchSize: 5, leaseSeconds: heldLeaseSeconds },
          key: 'admin',
        })
      ).status,
    ).toBe(201);
    const { traceId, traceparent } = newTrace();
    const items = Array.from({ length: 12 }, (_, i) => ({ id: `e-${i}` }));
    const submitted = await requestJson<{ id: string }>(host, 'POST', '/api/jobs', {
      body: { processor, items },
      headers: { traceparent },
    });
    expect(submitted.status).toBe(202);
    const gauge = (metric: string, value: (v: number) => boolean) =>
      until(
        `${metric} of ${processor}`,
        () => Promise.resolve(points(metric).find((p) => p.attributes['tallyho.job.processor'] === processor && value(p.value))),
        30_000,
      );
    await gauge('tallyho.job.processor.backlog', (v) => v === 3);
    await gauge('tallyho.job.processor.leased', (v) => v === 0);
    // The oldest envelope's age grows while it waits (the processor-backlog-age alert's signal).
    await gauge('tallyho.job.processor.backlog.age', (v) => v >= 1);
    // The worker's poll is traced too (its own traceparent): the lease is a trace of the worker's, linked to the job's.
    const worker = newTrace();
    const lease = await requestJson<{ leaseId: string; traceparent?: string; items: { id: string; traceparent?: string }[] }>(
      host,
      'POST',
      `/api/processors/${processor}/leases`,
      { body: { wait: 0 }, headers: { traceparent: worker.traceparent } },
    );
    expect(lease.status).toBe(200);
    await gauge('tallyho.job.processor.leased', (v) => v === 1);
    // Each leased item carries the submission's span context: a worker's own spans link the job's trace.
    const submit = await until(
      'the submission span',
      () => Promise.resolve(spansOf(traceId).find((s) => s.name === 'tallyho.job.submit')),
      30_000,
    );
    // Any of the three envelopes (5, 5 and 2 items): a queue does not promise its order.
    expect(lease.body.items.length).toBeGreaterThan(0);
    expect(lease.body.items.map((i) => i.traceparent)).toEqual(Array(lease.body.items.length).fill(`00-${traceId}-${submit.spanId}-01`));
    // The lease's span (a receive, as the messaging conventions have it) is a child of the host's span of
    // the lease request, links the submission, and is what the answer's traceparent names.
    const leaseSpan = await until(
      'the lease span',
      () => Promise.resolve(spansOf(worker.traceId).find((s) => s.name === 'tallyho.job.lease')),
      30_000,
    );
    expect(leaseSpan).toMatchObject({
      kind: 'consumer',
      attributes: {
        'tallyho.job.id': submitted.body.id,
        'tallyho.job.processor': processor,
        'messaging.operation.type': 'receive',
        'messaging.destination.name': expect.stringMatching(new RegExp(`^${prefix}-`)) as unknown,
      },
    });
    expect(leaseSpan.links).toEqual([expect.objectContaining({ traceId, spanId: submit.spanId })]);
    expect(lease.body.traceparent).toBe(`00-${worker.traceId}-${leaseSpan.spanId}-01`);
    const pollSpan = await until(
      'the host’s span of the lease request',
      () => Promise.resolve(hostSpan(spansOf(worker.traceId), 'leasesTake', worker.parent)),
      30_000,
    );
    expect(leaseSpan.parentSpanId).toBe(pollSpan.spanId);
    // A worker continuing the lease's context (its completion sent under it) keeps the tree whole.
    // Leave nothing behind for the tests after this one: the batch completed, the job cancelled.
    // One item failed, the rest succeeded: a declared processor's outcomes are counted as an in-app one's.
    const results = lease.body.items.map((i, at) =>
      at === 0
        ? { id: i.id, status: 'failed', code: 'Rejected', reason: 'rejected by the worker' }
        : { id: i.id, status: 'succeeded', output: {} },
    );
    const completed = await requestJson(host, 'POST', `/api/leases/${lease.body.leaseId}/complete`, {
      body: { results },
      headers: { traceparent: lease.body.traceparent ?? '' },
    });
    expect(completed.status).toBe(200);
    await until(
      'the host’s span of the completion, below the lease',
      () => Promise.resolve(hostSpan(spansOf(worker.traceId), 'leasesComplete', leaseSpan.spanId)),
      30_000,
    );
    await wholeTrace(worker.traceId, worker.parent);
    const ofProcessor = (metric: string, outcome?: string): number =>
      points(metric)
        .filter(
          (p) =>
            p.attributes['tallyho.job.processor'] === processor && (outcome === undefined || p.attributes['tallyho.outcome'] === outcome),
        )
        .reduce((most, p) => Math.max(most, p.value), 0);
    await until(
      'the leased items counted by outcome, and the envelope’s attempt',
      () =>
        Promise.resolve(
          ofProcessor('tallyho.job.items', 'failed') === 1 &&
            ofProcessor('tallyho.job.items', 'succeeded') === lease.body.items.length - 1 &&
            ofProcessor('tallyho.job.envelope.attempts') >= 1
            ? true
            : undefined,
        ),
      30_000,
    );
    expect((await requestJson(host, 'DELETE', `/api/jobs/${submitted.body.id}`)).status).toBeLessThan(300);
    // The work queues' oldest-envelope age is reported per queue.
    await until(
      'a work queue’s backlog age',
      () => Promise.resolve(points('tallyho.job.backlog.age').find((p) => p.attributes['messaging.destination.name'] === `${prefix}-0`)),
      30_000,
    );
  });

  test('HTTP requests are measured by route template and status, never by path', async () => {
    const name = unique('telemetry-seq');
    expect((await requestJson(host, 'PUT', `/api/sequences/${name}`, { body: {}, key: 'admin' })).status).toBe(201);
    expect((await requestJson(host, 'POST', `/api/sequences/${name}/next`, { body: { count: 2 } })).status).toBe(200);
    expect((await requestJson(host, 'POST', '/api/sequences/missing-one/next', { body: { count: 1 } })).status).toBe(404);
    await until('the request metrics', () => {
      const routes = points('http.server.request.duration').map(
        (p) => `${String(p.attributes['http.route'])} ${String(p.attributes['http.response.status_code'])}`,
      );
      return Promise.resolve(
        routes.includes('sequences/{name}/next 200') && routes.includes('sequences/{name}/next 404') ? routes : undefined,
      );
    });
    // The app's own metrics and spans never carry the path. The host's request span does (url.path, as
    // the real host sends it; the devhost's is shaped like it), which is the host's data, not the app's;
    // so do the real host's other spans (its System.Net.Http client span of the call it forwards to the
    // worker has url.full), all from its .NET SDK's resource. Seen once spans left every 500 ms: with the
    // SDK's 5 s batches they had not arrived yet when this check ran.
    const appSpans = receiver.spans.filter((s) => s.scope !== 'Microsoft.AspNetCore' && s.resource['telemetry.sdk.language'] !== 'dotnet');
    expect(JSON.stringify({ points: receiver.points, spans: appSpans })).not.toContain('missing-one');
    await until('numbers issued, named as allowed', () =>
      Promise.resolve(points('tallyho.sequence.numbers.issued').find((p) => p.attributes['tallyho.sequence.name'] === name)),
    );
  });

  test('a request answered 5xx because storage fails is measured with its status and error.type (the http-server-errors alert’s state)', async () => {
    const name = unique('telemetry-fault');
    expect((await requestJson(host, 'PUT', `/api/sequences/${name}`, { body: {}, key: 'admin' })).status).toBe(201);
    const fiveHundreds = () =>
      points('http.server.request.duration').filter(
        (p) => p.attributes['http.route'] === 'sequences/{name}/next' && Number(p.attributes['http.response.status_code']) >= 500,
      );
    expect(fiveHundreds()).toEqual([]);
    // Every request to the sequences table answers 503 (Server Busy) until the rule is lifted.
    proxy.setRules((r) => (r.service === 'table' && /^\/[^/]+\/sequences[(?]/.test(r.path) ? { kind: 'status', status: 503 } : undefined));
    try {
      const refused = await requestJson(host, 'POST', `/api/sequences/${name}/next`, { body: { count: 1 } });
      expect(refused.status).toBe(503);
    } finally {
      proxy.setRules();
    }
    const [point] = await until('the 503 measured', () => Promise.resolve(fiveHundreds().length > 0 ? fiveHundreds() : undefined), 30_000);
    expect(point?.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503', 'http.request.method': 'POST' });
  });

  test('streams: the append’s trace reaches the flush (a link), and the buffer depth is read from the writer’s state', async () => {
    const type = unique('telemetry-st');
    // A partition of its own (a remap before the first append), so the partition's depth is this writer's alone.
    const partition = `depth-${randomBytes(4).toString('hex')}`;
    expect((await remap(host, type, { partition })).done.status).toBe(200);
    const depthsSince = (since: number): ReceivedPoint[] =>
      points('tallyho.stream.buffer.depth').filter((p) => p.attributes['tallyho.stream.partition'] === partition && p.timeMs > since);
    // The job backlog is reported at every collection: its distinct collection times since a moment count the collections read after it.
    const collectionsSince = (since: number): number =>
      new Set(
        points('tallyho.job.backlog')
          .filter((p) => p.timeMs > since)
          .map((p) => p.timeMs),
      ).size;

    const { traceId, parent, traceparent } = newTrace();
    const appended = await requestJson<{ partition: string; accepted: number }>(host, 'POST', `/api/streams/${type}/events`, {
      body: { events: [1, 2, 3].map((seq) => ({ producer: 'p1', seq, data: { n: seq } })) },
      headers: { traceparent },
    });
    expect(appended.status).toBe(202);
    expect(appended.body).toMatchObject({ partition, accepted: 3 });
    expect((await post(host, type, { producer: 'p1', seq: 1, data: { n: 1 } })).body.duplicates).toBe(1);

    // Buffered (T is 10 minutes on this host): each collection reads the 3 events from the writer's ledger again.
    const buffered = Date.now();
    await until(
      'the depth read as 3 in two collections',
      () => Promise.resolve(depthsSince(buffered).length >= 2 ? true : undefined),
      60_000,
    );
    expect(depthsSince(buffered).map((p) => p.value)).toEqual(depthsSince(buffered).map(() => 3));

    // The writers cannot be listed (the routes table answers 503): no depth at all, never the last 3.
    proxy.setRules((r) =>
      r.service === 'table' && /^\/[^/]+\/streamroutes[(?]/.test(r.path) ? { kind: 'status', status: 503 } : undefined,
    );
    const failing = Date.now();
    try {
      await until(
        'two collections while the routes table fails',
        () => Promise.resolve(collectionsSince(failing) >= 2 ? true : undefined),
        60_000,
      );
      expect(depthsSince(failing)).toEqual([]);
    } finally {
      proxy.setRules();
    }

    expect((await flush(host, type)).status).toBe(200);
    const flushed = Date.now();
    await until('the depth read as 0 after the flush', () => Promise.resolve(depthsSince(flushed).length >= 1 ? true : undefined), 60_000);
    expect(depthsSince(flushed).map((p) => p.value)).toEqual(depthsSince(flushed).map(() => 0));

    const append = await until(
      'the append’s span',
      () => Promise.resolve(spansOf(traceId).find((s) => s.name === 'tallyho.stream.append')),
      30_000,
    );
    expect(append.kind).toBe('producer');
    // The request's server span ends after the answer, so it may be exported after the append's.
    const server = await until(
      'the request’s server span',
      () => Promise.resolve(spansOf(traceId).find((s) => s.spanId === append.parentSpanId)),
      30_000,
    );
    expect(server).toMatchObject({ kind: 'server', parentSpanId: parent });
    // The flush runs in an activity with no trace of its own: its span links every append it wrote.
    const flushSpan = await until(
      'the flush span linking the append',
      () =>
        Promise.resolve(receiver.spans.find((s) => s.name === 'tallyho.stream.flush' && s.links.some((l) => l.spanId === append.spanId))),
      30_000,
    );
    expect(flushSpan.kind).toBe('consumer');
    expect(flushSpan.links).toContainEqual(expect.objectContaining({ traceId, spanId: append.spanId }));
    await until(
      'the streams counters',
      () => {
        const ready =
          points('tallyho.stream.events.duplicates').some((p) => p.attributes['tallyho.stream.type'] === type && p.value >= 1) &&
          points('tallyho.stream.flush.lag').some((p) => p.attributes['tallyho.stream.partition'] === partition) &&
          points('tallyho.stream.events.flushed').some((p) => p.attributes['tallyho.stream.partition'] === partition && p.value >= 3);
        return Promise.resolve(ready ? true : undefined);
      },
      30_000,
    );
  });

  test('a gate release is one trace: the release, its action batches, and the runs’ actions within them', async () => {
    const gate = unique('telemetry-gate');
    expect((await requestJson(host, 'PUT', `/api/gates/${gate}`, { key: 'admin' })).status).toBe(201);
    for (const runId of ['r1', 'r2']) {
      const started = await requestJson(host, 'POST', `/api/gates/${gate}/runs`, {
        body: { runId, action: { type: 'enqueue', payload: { runId } } },
      });
      expect(started.status).toBe(202);
    }
    await until(
      'both runs waiting',
      async () =>
        (await requestJson<{ waiters: { waiting: number } }>(host, 'GET', `/api/gates/${gate}`)).body.waiters.waiting === 2
          ? true
          : undefined,
      30_000,
    );
    const { traceId, parent, traceparent } = newTrace();
    const released = await requestJson(host, 'POST', `/api/gates/${gate}/release`, {
      key: 'admin',
      body: { by: 'telemetry-test' },
      headers: { traceparent },
    });
    expect(released.status).toBe(200);
    // A parent span ends, and is exported, after its children: the batches' spans can reach the
    // collector in a later export than the runs' actions within them, so the wait is for the actions
    // and the spans they name as parents.
    const spans = await until(
      'the release’s spans at the collector',
      () => {
        const found = spansOf(traceId);
        const actions = found.filter((s) => s.name === 'tallyho.gate.run.action');
        const parentsIn = actions.every((a) => found.some((s) => s.spanId === a.parentSpanId));
        return Promise.resolve(actions.length === 2 && parentsIn ? found : undefined);
      },
      60_000,
    );
    const release = spans.find((s) => s.name === 'tallyho.gate.release');
    expect(release?.attributes).toEqual({ 'tallyho.gate.name': gate });
    await until(
      'the host’s span of the release',
      () => Promise.resolve(spansOf(traceId).find((s) => s.spanId === release?.parentSpanId)),
      30_000,
    );
    expect(spansOf(traceId).find((s) => s.spanId === release?.parentSpanId)).toMatchObject({ kind: 'server', parentSpanId: parent });
    const batches = spans.filter((s) => s.name === 'tallyho.gate.actions');
    expect(batches.length).toBeGreaterThan(0);
    expect(batches.every((s) => s.parentSpanId === release?.spanId)).toBe(true);
    const batchIds = new Set(batches.map((s) => s.spanId));
    expect(spans.filter((s) => s.name === 'tallyho.gate.run.action').every((s) => batchIds.has(s.parentSpanId ?? ''))).toBe(true);
    // Each action's message on gate-actions carries the traceparent of its send span, a child of the action.
    const sends = await until(
      'the action’s send spans',
      () => {
        const found = spansOf(traceId).filter((s) => s.name === 'tallyho.effect.send');
        return Promise.resolve(found.length === 2 ? found : undefined);
      },
      30_000,
    );
    const actionIds = new Set(
      spansOf(traceId)
        .filter((s) => s.name === 'tallyho.gate.run.action')
        .map((s) => s.spanId),
    );
    expect(sends.every((s) => s.kind === 'producer' && actionIds.has(s.parentSpanId ?? ''))).toBe(true);
    const queue = new QueueClient(storageOf(host), 'gate-actions');
    const peeked = await queue.peekMessages({ numberOfMessages: 32 });
    const carried = peeked.peekedMessageItems
      .map((m) => JSON.parse(Buffer.from(m.messageText, 'base64').toString('utf8')) as { gate: string; traceparent?: string })
      .filter((m) => m.gate === gate)
      .map((m) => m.traceparent);
    expect(carried.sort()).toEqual(sends.map((s) => `00-${s.traceId}-${s.spanId}-01`).sort());
    await wholeTrace(traceId, parent);
  });

  test('a gated job is one trace: the release, the action, the job’s submission, every envelope and the completion', async () => {
    const gate = unique('telemetry-gated');
    expect((await requestJson(host, 'PUT', `/api/gates/${gate}`, { key: 'admin' })).status).toBe(201);
    const items = transactions(12, 3, 'gated');
    const started = await requestJson(host, 'POST', `/api/gates/${gate}/runs`, {
      body: { runId: 'month-end', action: { type: 'job', processor: 'billing', items } },
    });
    expect(started.status).toBe(202);
    await until(
      'the run waiting',
      async () =>
        (await requestJson<{ waiters: { waiting: number } }>(host, 'GET', `/api/gates/${gate}`)).body.waiters.waiting === 1
          ? true
          : undefined,
      30_000,
    );
    const { traceId, parent, traceparent } = newTrace();
    const released = await requestJson(host, 'POST', `/api/gates/${gate}/release`, {
      key: 'admin',
      body: { by: 'telemetry-test' },
      headers: { traceparent },
    });
    expect(released.status).toBe(200);
    const spans = await until(
      'the gated job’s trace, completed and whole (no orphans), with the host’s span of the release',
      () => {
        const found = spansOf(traceId);
        const done =
          found.some((s) => s.name === 'tallyho.job.complete') &&
          found.some((s) => s.kind === 'server' && s.parentSpanId === parent) &&
          orphans(found, parent).length === 0;
        return Promise.resolve(done ? found : undefined);
      },
      90_000,
    );
    const one = (name: string): ReceivedSpan => {
      const found = spans.filter((s) => s.name === name);
      expect({ name, count: found.length }).toEqual({ name, count: 1 });
      return found[0] as ReceivedSpan;
    };
    const root = spans.find((s) => s.kind === 'server' && s.parentSpanId === parent) as ReceivedSpan;
    const release = one('tallyho.gate.release');
    const action = one('tallyho.gate.run.action');
    const submit = one('tallyho.job.submit');
    const complete = one('tallyho.job.complete');
    expect(root.attributes['faas.name']).toBe('gatesRelease');
    expect(release.parentSpanId).toBe(root.spanId);
    expect(spans.find((s) => s.spanId === action.parentSpanId)?.name).toBe('tallyho.gate.actions');
    expect(submit.parentSpanId).toBe(action.spanId);
    const processes = spans.filter((s) => s.name === 'tallyho.job.process');
    expect(processes.length).toBeGreaterThan(0);
    for (const p of processes) expect(p.parentSpanId).toBe(submit.spanId);
    expect(complete.parentSpanId).toBe(submit.spanId);
    const out = process.env.TELEMETRY_TRACE_OUT;
    if (out !== undefined && out !== '')
      writeFileSync(out, JSON.stringify({ host: hostKind(), traceId, callerSpan: parent, spans }, null, 1));
  });

  test('a schedule’s trigger-now continues the request’s trace: the run, its send span, and the traceparent in the message', async () => {
    const id = unique('telemetry-sched');
    const queue = unique('app-tel');
    const at = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const created = await requestJson(host, 'POST', '/api/schedules', {
      body: { id, at, target: { type: 'queueMessage', queue, message: { order: 7 } } },
    });
    expect(created.status).toBe(201);
    await until(
      'the schedule active',
      async () => ((await requestJson<{ state: string }>(host, 'GET', `/api/schedules/${id}`)).body.state === 'active' ? true : undefined),
      30_000,
    );
    const { traceId, parent, traceparent } = newTrace();
    expect((await requestJson(host, 'POST', `/api/schedules/${id}/trigger`, { key: 'admin', headers: { traceparent } })).status).toBe(202);
    const spans = await until(
      'the run’s spans',
      () => {
        const found = spansOf(traceId);
        return Promise.resolve(
          found.some((s) => s.name === 'tallyho.effect.send') && found.some((s) => s.kind === 'server') ? found : undefined,
        );
      },
      60_000,
    );
    const root = spans.find((s) => s.kind === 'server' && s.parentSpanId === parent);
    const run = spans.find((s) => s.name === 'tallyho.schedule.run');
    const send = spans.find((s) => s.name === 'tallyho.effect.send');
    expect(root?.attributes['faas.name']).toBe('schedulesTrigger');
    expect(run?.parentSpanId).toBe(root?.spanId);
    expect(send?.parentSpanId).toBe(run?.spanId);
    const peeked = await new QueueClient(storageOf(host), queue).peekMessages({ numberOfMessages: 1 });
    const message = JSON.parse(Buffer.from(peeked.peekedMessageItems[0]?.messageText ?? '', 'base64').toString('utf8')) as unknown;
    expect(message).toEqual({ order: 7, traceparent: `00-${traceId}-${send?.spanId ?? ''}-01` });
  });
});
