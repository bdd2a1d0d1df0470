/**
 * Telemetry through a host: the app exports to an OTLP collector (a receiver in this test process)
 * named by OTEL_EXPORTER_OTLP_ENDPOINT. A job submitted with a `traceparent` is one trace — the
 * submission, each envelope's delivery (queue triggers) and the completion — continuing the caller's
 * trace, whichever host runs it; the HTTP, jobs and streams metrics arrive with bounded attributes;
 * and nothing sent holds a key or an item.
 */
import { randomBytes } from 'node:crypto';

import { transactions } from '../support/billing';
import { type OtlpReceiver, type ReceivedPoint, type ReceivedSpan, startOtlpReceiver } from '../support/otlpReceiver';
import { type E2eHost, hostKind, startE2eHost } from './support/harness';
import { requestJson } from './support/http';
import { settledJob, queuesPolledPromptly } from './support/jobs';
import { unique } from './support/names';
import { flush, post } from './support/streams';
import { until } from './support/wait';

const external = hostKind() === 'external';
const describeOwnHost = external ? describe.skip : describe;

describeOwnHost(`telemetry to an OTLP collector${external ? ' [skipped: needs a host of its own; E2E_BASE_URL is set]' : ''}`, () => {
  let receiver: OtlpReceiver;
  let host: E2eHost;
  const prefix = unique('tq');

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    host = await startE2eHost({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_METRIC_EXPORT_INTERVAL: '1000',
        TALLYHO_TELEMETRY_CALLER_NAMES: 'telemetry-*',
        TALLYHO_JOBS_QUEUE_PREFIX: prefix,
        TALLYHO_JOBS_QUEUES: '2',
        TALLYHO_STREAMS_FLUSH_INTERVAL_MS: '200',
        ...queuesPolledPromptly,
      },
    });
  });
  afterAll(async () => {
    await host.stop();
    await receiver.close();
  });

  const spansOf = (traceId: string): ReceivedSpan[] => receiver.spans.filter((s) => s.traceId === traceId);
  const points = (metric: string): ReceivedPoint[] => receiver.points.filter((p) => p.metric === metric);

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
    expect(names.filter((n) => n === 'tallyho.job.process')).toHaveLength(job.envelopes.count);
    const submit = spans.find((s) => s.name === 'tallyho.job.submit');
    expect(submit?.attributes).toEqual({ 'tallyho.job.id': job.id, 'tallyho.job.processor': 'billing' });
    // Each delivery is a child of the submission. The host gives a queue invocation no trace context
    // of its own (devhost/docs/real-host.md#trace-context): the envelope's traceparent is the only tie.
    for (const process of spans.filter((s) => s.name === 'tallyho.job.process')) {
      expect(process.parentSpanId).toBe(submit?.spanId);
      expect(process.links).toEqual([]);
    }
    const sent = receiver.bodies.join('\n');
    for (const item of items) expect(sent).not.toContain(item.id);
    for (const key of [host.keys.function, host.keys.admin]) if (key !== undefined) expect(sent).not.toContain(key);
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
    expect(receiver.bodies.join('\n')).not.toContain('missing-one');
    await until('numbers issued, named as allowed', () =>
      Promise.resolve(points('tallyho.sequence.numbers.issued').find((p) => p.attributes['tallyho.sequence.name'] === name)),
    );
  });

  test('streams: accepted and duplicate events and the buffer depth from the appends, flushed events and flush lag from the flusher', async () => {
    const type = unique('telemetry-st');
    expect((await post(host, type, { producer: 'p1', seq: 1, data: { n: 1 } })).status).toBe(202);
    expect((await post(host, type, { producer: 'p1', seq: 1, data: { n: 1 } })).body.duplicates).toBe(1);
    expect((await flush(host, type)).status).toBe(200);
    await until(
      'the streams metrics',
      () => {
        const ready =
          points('tallyho.stream.events.duplicates').some((p) => p.attributes['tallyho.stream.type'] === type && p.value >= 1) &&
          points('tallyho.stream.buffer.depth').length > 0 &&
          points('tallyho.stream.flush.lag').length > 0 &&
          points('tallyho.stream.events.flushed').some((p) => p.value >= 1);
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
    const traceId = randomBytes(16).toString('hex');
    const released = await requestJson(host, 'POST', `/api/gates/${gate}/release`, {
      key: 'admin',
      body: { by: 'telemetry-test' },
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    });
    expect(released.status).toBe(200);
    const spans = await until(
      'the release’s spans at the collector',
      () => {
        const found = spansOf(traceId);
        return Promise.resolve(found.filter((s) => s.name === 'tallyho.gate.run.action').length === 2 ? found : undefined);
      },
      60_000,
    );
    const release = spans.find((s) => s.name === 'tallyho.gate.release');
    expect(release?.attributes).toEqual({ 'tallyho.gate.name': gate });
    const batches = spans.filter((s) => s.name === 'tallyho.gate.actions');
    expect(batches.length).toBeGreaterThan(0);
    expect(batches.every((s) => s.parentSpanId === release?.spanId)).toBe(true);
    const batchIds = new Set(batches.map((s) => s.spanId));
    expect(spans.filter((s) => s.name === 'tallyho.gate.run.action').every((s) => batchIds.has(s.parentSpanId ?? ''))).toBe(true);
  });
});
