/**
 * The one effects layer (shared/effects): its key rule, its one validation with the deployment's
 * rules, and its runner's outcomes — what a gate run's action and a schedule's target both go through.
 */
import { SpanKind } from '@opentelemetry/api';
import type { QueueClient } from '@azure/storage-queue';

import { effectIssues, type EffectRules, unavailable } from '../../../shared/effects/admission';
import { type Effect, effectKey, type EffectOrigin, jobKey } from '../../../shared/effects/effect';
import { idempotencyKey } from '../../../shared/http/schemas';
import { isAppKey } from '../../../shared/names';
import { type EffectPorts, pollEffect, runEffect } from '../../../shared/effects/runner';
import { parseAllowList } from '../../../shared/effects/webhook/allowList';
import { AppError, isAppError } from '../../../shared/errors';
import { memoryTelemetry } from '../../support/telemetry';

const gateRun: EffectOrigin = { kind: 'gateRun', gate: 'launch', generation: 3, runId: 'w7' };
const scheduleRun: EffectOrigin = {
  kind: 'scheduleRun',
  scheduleId: 'nightly',
  runId: 'nightly#4',
  scheduledFor: '2027-01-01T02:30:00.000Z',
  fireKind: 'scheduled',
  createdBy: 'created by "ops" with the admin key',
};

function rules(overrides: Partial<EffectRules> = {}): EffectRules {
  return {
    queues: { allowed: ['app-*'], jobsQueuePrefix: 'my-jobs' },
    serviceBusEntities: ['app-*'],
    serviceBusConfigured: true,
    webhook: { allowed: parseAllowList(['hooks.example.com']), allowPrivateAddresses: false },
    gatesAvailable: true,
    jobs: { check: () => Promise.resolve() },
    ...overrides,
  };
}

describe('effectKey', () => {
  it("names a gate run's key by its gate (run ids are unique per gate) and uses a schedule run's id as it is", () => {
    expect(effectKey(gateRun)).toBe('gate-run:launch:w7');
    expect(effectKey({ ...gateRun, gate: 'other' })).not.toBe(effectKey(gateRun));
    expect(effectKey({ ...gateRun, generation: 4 })).toBe(effectKey(gateRun));
    expect(effectKey(scheduleRun)).toBe('nightly#4');
  });
});

describe('jobKey', () => {
  it("is in the app's own key form, which no Idempotency-Key a caller sends can take", () => {
    expect(jobKey(gateRun)).toBe('gate-run launch:w7');
    expect(jobKey(scheduleRun)).toBe('schedule-run nightly#4');
    for (const origin of [gateRun, scheduleRun]) {
      expect(isAppKey(jobKey(origin))).toBe(true);
      expect(idempotencyKey.safeParse(jobKey(origin)).success).toBe(false);
      // The key a caller would have had to guess before is no longer the run's.
      expect(jobKey(origin)).not.toBe(effectKey(origin));
    }
  });
});

describe('effectIssues: one validation against the deployment', () => {
  const at = 'body.target';

  it.each<[string, Effect, Partial<EffectRules>, { path: string; message: RegExp }[]]>([
    ['an allowed queue', { type: 'enqueue', queue: 'app-reminders', message: 1 }, {}, []],
    [
      'a queue off the allow-list',
      { type: 'enqueue', queue: 'reminders', message: 1 },
      {},
      [{ path: 'body.target.queue', message: /not allowed/ }],
    ],
    [
      'a work queue of this deployment',
      { type: 'enqueue', queue: 'my-jobs-2', message: 1 },
      { queues: { allowed: ['*'], jobsQueuePrefix: 'my-jobs' } },
      [{ path: 'body.target.queue', message: /belongs to the app/ }],
    ],
    [
      'a poison queue, whatever the list says',
      { type: 'enqueue', queue: 'app-x-poison', message: 1 },
      {},
      [{ path: 'body.target.queue', message: /poison/ }],
    ],
    [
      'Service Bus when none is configured',
      { type: 'serviceBus', entity: 'app-orders', message: 1 },
      { serviceBusConfigured: false },
      [{ path: 'body.target.type', message: /not configured/ }],
    ],
    [
      'the app own topic',
      { type: 'serviceBus', entity: 'Gate-Events', message: 1 },
      {},
      [{ path: 'body.target.entity', message: /own events/ }],
    ],
    [
      'a webhook host off the list',
      { type: 'webhook', url: 'https://evil.example.net/x' },
      {},
      [{ path: 'body.target.url', message: /allow-list/ }],
    ],
    ['a webhook over http', { type: 'webhook', url: 'http://hooks.example.com/x' }, {}, [{ path: 'body.target.url', message: /https/ }]],
    ['a listed webhook', { type: 'webhook', url: 'https://hooks.example.com/x' }, {}, []],
    [
      'a gate release without gates',
      { type: 'gateRelease', gate: 'g' },
      { gatesAvailable: false },
      [{ path: 'body.target.type', message: new RegExp(unavailable.gates) }],
    ],
    [
      'a job without jobs',
      { type: 'job', processor: 'billing', items: [{ id: 'a' }] },
      { jobs: undefined },
      [{ path: 'body.target.type', message: new RegExp(unavailable.jobs) }],
    ],
  ])('%s', async (_name, effect, overrides, expected) => {
    const issues = await effectIssues(effect, rules(overrides), at);
    expect(issues).toHaveLength(expected.length);
    expected.forEach((e, i) => expect(issues[i]).toEqual({ path: e.path, message: expect.stringMatching(e.message) as string }));
  });

  it("a job is checked by the jobs capability itself: its refusal comes through as it is, with its paths under the effect's", async () => {
    const jobs = {
      check: () => {
        return Promise.reject(
          new AppError('PayloadTooLarge', 'too many items', { issues: [{ path: 'body.items.3', message: 'too large' }] }),
        );
      },
    };
    let thrown: unknown;
    try {
      await effectIssues({ type: 'job', processor: 'billing', items: [{ id: 'a' }] }, rules({ jobs }), 'body.action');
    } catch (err) {
      thrown = err;
    }
    expect(isAppError(thrown) && { code: thrown.code, status: thrown.status, issues: thrown.issues }).toEqual({
      code: 'PayloadTooLarge',
      status: 413,
      issues: [{ path: 'body.action.items.3', message: 'too large' }],
    });
  });
});

/** Ports that record what each effect sent. */
function recordingPorts(options: { queueFails?: Error } = {}) {
  const queued: string[] = [];
  const sent: unknown[] = [];
  const released: { gate: string; by: string; note: string }[] = [];
  const submitted: { processor: string; key: string }[] = [];
  const queue = {
    name: 'app-reminders',
    sendMessage: (text: string) => {
      if (options.queueFails !== undefined) return Promise.reject(options.queueFails);
      queued.push(Buffer.from(text, 'base64').toString('utf8'));
      return Promise.resolve({ messageId: `m${queued.length}` });
    },
  } as unknown as QueueClient;
  const ports: EffectPorts = {
    queue: () => Promise.resolve(queue),
    serviceBusSender: () => ({ sendMessages: (m: unknown) => Promise.resolve(void sent.push(m)) }),
    webhook: { allowed: [], timeoutMs: 1000, maxResponseBytes: 0, maxRedirects: 0, allowPrivateAddresses: false },
    gates: { release: (gate, by, note) => Promise.resolve((released.push({ gate, by, note }), 'released')) },
    jobs: {
      submit: (processor, _items, key) => Promise.resolve((submitted.push({ processor, key }), `job-${key}`)),
      status: () => Promise.resolve({ state: 'running' }),
    },
  };
  return { ports, queued, sent, released, submitted };
}

describe('runEffect: one runner, one outcome type', () => {
  it('enqueues the message base64-encoded and reports the queue and message id', async () => {
    const r = recordingPorts();
    const outcome = await runEffect({ type: 'enqueue', queue: 'app-reminders', message: { a: 1 } }, scheduleRun, r.ports);
    expect(outcome).toEqual({ outcome: 'succeeded', detail: 'queued m1', queued: { queue: 'app-reminders', messageId: 'm1' } });
    expect(r.queued).toEqual(['{"a":1}']);
  });

  it("sends Service Bus messages under the effect's key, with the origin as application properties", async () => {
    const r = recordingPorts();
    await runEffect({ type: 'serviceBus', entity: 'app-orders', message: 'hi', sessionId: 's' }, scheduleRun, r.ports);
    expect(r.sent).toEqual([
      {
        body: 'hi',
        contentType: 'application/json',
        messageId: 'nightly#4',
        sessionId: 's',
        applicationProperties: { scheduleId: 'nightly', runId: 'nightly#4', scheduledFor: '2027-01-01T02:30:00.000Z' },
      },
    ]);
  });

  it('submits a job under the key and answers `started` with its handle, which a poll follows', async () => {
    const r = recordingPorts();
    const outcome = await runEffect({ type: 'job', processor: 'billing', items: [{ id: 'a' }] }, gateRun, r.ports);
    expect(outcome).toEqual({ outcome: 'started', handle: 'job-gate-run launch:w7' });
    expect(r.submitted).toEqual([{ processor: 'billing', key: 'gate-run launch:w7' }]);
    expect(await pollEffect({ type: 'job', processor: 'billing', items: [] }, 'h', r.ports)).toEqual({ outcome: 'running' });
  });

  it('releases a gate as the schedule, naming its run and creator for the audit', async () => {
    const r = recordingPorts();
    expect(await runEffect({ type: 'gateRelease', gate: 'launch' }, scheduleRun, r.ports)).toEqual({
      outcome: 'succeeded',
      detail: 'released',
    });
    expect(r.released).toEqual([
      {
        gate: 'launch',
        by: 'schedule:nightly',
        note: 'run nightly#4 due 2027-01-01T02:30:00.000Z; schedule created by "ops" with the admin key',
      },
    ]);
  });

  it('a missing capability or service is an outcome, not a throw', async () => {
    const r = recordingPorts();
    const bare: EffectPorts = { ...r.ports, gates: undefined, jobs: undefined, serviceBusSender: () => undefined };
    expect(await runEffect({ type: 'gateRelease', gate: 'g' }, scheduleRun, bare)).toEqual({
      outcome: 'failed',
      reason: unavailable.gates,
    });
    expect(await runEffect({ type: 'job', processor: 'billing', items: [] }, scheduleRun, bare)).toEqual({
      outcome: 'failed',
      reason: unavailable.jobs,
    });
    expect(await runEffect({ type: 'serviceBus', entity: 'app-x', message: 1 }, scheduleRun, bare)).toEqual({
      outcome: 'failed',
      reason: unavailable.serviceBus,
    });
  });

  it('a failure a retry may fix is thrown (the activity retries); any other is a failed outcome with its first line', async () => {
    const busy = Object.assign(new Error('Server busy'), { statusCode: 503 });
    await expect(
      runEffect({ type: 'enqueue', queue: 'q', message: 1 }, scheduleRun, recordingPorts({ queueFails: busy }).ports),
    ).rejects.toBe(busy);
    const forbidden = Object.assign(new Error('This request is not authorized\nRequestId: x'), { statusCode: 403 });
    expect(
      await runEffect({ type: 'enqueue', queue: 'q', message: 1 }, scheduleRun, recordingPorts({ queueFails: forbidden }).ports),
    ).toEqual({
      outcome: 'failed',
      reason: 'This request is not authorized',
    });
  });

  it('a webhook the rules refuse is a failed outcome saying so (no request is made)', async () => {
    const r = recordingPorts();
    const outcome = await runEffect({ type: 'webhook', url: 'https://not-listed.example.com/' }, scheduleRun, r.ports);
    expect(outcome).toEqual({ outcome: 'failed', reason: expect.stringMatching(/^refused: .*allow-list/) as string });
  });
});

describe('runEffect: trace context travels with what is sent (messaging conventions)', () => {
  const memory = memoryTelemetry({ callerNames: ['*'] });
  afterAll(() => memory.shutdown());
  const sendSpans = () => memory.spans().filter((s) => s.name === 'tallyho.effect.send');
  const traceparentOf = (s: { spanContext(): { traceId: string; spanId: string } }): string =>
    `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`;

  it("a queue message that is a JSON object carries its send span's traceparent as a member; other messages go unchanged", async () => {
    const r = recordingPorts();
    const before = sendSpans().length;
    await runEffect({ type: 'enqueue', queue: 'app-reminders', message: { a: 1 } }, gateRun, r.ports, memory.telemetry);
    await runEffect({ type: 'enqueue', queue: 'app-reminders', message: 'plain text' }, scheduleRun, r.ports, memory.telemetry);
    await runEffect({ type: 'enqueue', queue: 'app-reminders', message: [1, 2] }, scheduleRun, r.ports, memory.telemetry);
    const [object, ...others] = sendSpans().slice(before);
    expect(object?.kind).toBe(SpanKind.PRODUCER);
    expect(object?.attributes).toEqual({
      'messaging.system': 'azure_storage_queues',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
      'messaging.destination.name': 'app-reminders',
    });
    expect(JSON.parse(r.queued[0] ?? '')).toEqual({ a: 1, traceparent: traceparentOf(object as never) });
    expect(r.queued.slice(1)).toEqual(['plain text', '[1,2]']);
    expect(others).toHaveLength(2);
  });

  it('a Service Bus message carries it as the traceparent and Diagnostic-Id application properties', async () => {
    const r = recordingPorts();
    await runEffect({ type: 'serviceBus', entity: 'app-orders', message: 'hi' }, scheduleRun, r.ports, memory.telemetry);
    const span = sendSpans().at(-1);
    expect(span?.attributes['messaging.system']).toBe('servicebus');
    const properties = (r.sent[0] as { applicationProperties: Record<string, unknown> }).applicationProperties;
    expect(properties).toMatchObject({ traceparent: traceparentOf(span as never), 'Diagnostic-Id': traceparentOf(span as never) });
  });

  it('without tracing nothing is added', async () => {
    const r = recordingPorts();
    await runEffect({ type: 'enqueue', queue: 'app-reminders', message: { a: 1 } }, gateRun, r.ports);
    expect(r.queued).toEqual(['{"a":1}']);
  });
});
