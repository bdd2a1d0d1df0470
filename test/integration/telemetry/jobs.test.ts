/**
 * The jobs capability's telemetry on Azurite, delivered by the harness's host-like drain: each metric
 * moves when its event happens, a job's spans (submission, every envelope delivery, completion) share
 * one trace id, and no attribute carries an item id or item data.
 */
import { context as otelContext, SpanStatusCode } from '@opentelemetry/api';

import { type Clock, systemClock } from '../../../shared/clock';
import { poisonQueueName } from '../../../shared/jobs/queueNames';
import { contextOf } from '../../../shared/telemetry/traceContext';
import { openEnvelope } from '../../../shared/jobs/envelopes/seal';
import { declareBody } from '../../../shared/jobs/http/processorSchemas';
import { transactions } from '../../support/billing';
import { jobHarness, testSigner } from '../../support/jobs';
import { memoryTelemetry } from '../../support/telemetry';

/** The host's span for an invocation (what functions/_telemetry.ts makes active around a handler). */
const hostInvocation = contextOf('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');

describe('jobs telemetry', () => {
  it('a job is one trace: the submission, every envelope delivery and the completion share its trace id', async () => {
    const memory = memoryTelemetry();
    const h = jobHarness({ settings: { queues: 2 }, telemetry: memory.telemetry });
    const items = transactions(70, 3);
    const { job } = await otelContext.with(hostInvocation, () => h.jobs.submissions.submit({ processor: 'billing', items }, undefined));

    // Every envelope carries the submission's traceparent under its seal.
    const sealed = [...(await h.messages()).values()].flat();
    expect(sealed).toHaveLength(job.envelopes);
    const carried = sealed.map((text) => {
      const opened = openEnvelope(text, testSigner);
      if (!opened.ok) throw new Error(opened.reason);
      return opened.envelope.trace;
    });

    await h.drain();
    const spans = memory.spans();
    const submit = spans.find((s) => s.name === 'tallyho.job.submit');
    const processes = spans.filter((s) => s.name === 'tallyho.job.process');
    const complete = spans.find((s) => s.name === 'tallyho.job.complete');
    expect(submit).toBeDefined();
    expect(processes).toHaveLength(job.envelopes);
    expect(complete).toBeDefined();
    const traceId = submit?.spanContext().traceId;
    // The submission continues the host's trace (the request's); everything after continues the submission's.
    expect(traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(new Set([...processes, complete].map((s) => s?.spanContext().traceId))).toEqual(new Set([traceId]));
    expect(new Set(carried)).toEqual(new Set([`00-${traceId}-${submit?.spanContext().spanId}-01`]));
    expect(processes.every((s) => s.parentSpanContext?.spanId === submit?.spanContext().spanId)).toBe(true);
    expect(submit?.attributes).toEqual({
      'tallyho.job.processor': 'billing',
      'tallyho.job.id': job.id,
      'messaging.operation.type': 'send',
    });
    expect(new Set(processes.map((s) => s.attributes['messaging.operation.type']))).toEqual(new Set(['process']));

    // Nothing of the items in any span attribute.
    const attributeText = JSON.stringify(spans.map((s) => s.attributes));
    for (const item of items) expect(attributeText).not.toContain(item.id);
    expect(attributeText).not.toContain('customerId');
  });

  it('a lease is a receive span below the lease request’s, linked to the submission, and its answer carries that span’s traceparent', async () => {
    const memory = memoryTelemetry();
    const h = jobHarness({ telemetry: memory.telemetry });
    await h.jobs.processors.declare('thumbs', declareBody.parse({ type: 'external', batchSize: 5 }));
    const items = Array.from({ length: 5 }, (_, i) => ({ id: `t-${i}` }));
    await otelContext.with(hostInvocation, () => h.jobs.submissions.submit({ processor: 'thumbs', items }, undefined));
    // The lease request's own span (the host's, or the worker's traceparent): another trace.
    const request = contextOf('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    const granted = await otelContext.with(request, () => h.jobs.leases.take('thumbs', { holder: 'worker', waitSeconds: 0 }));
    const submit = memory.spans().find((s) => s.name === 'tallyho.job.submit');
    const lease = memory.spans().find((s) => s.name === 'tallyho.job.lease');
    expect(lease?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(lease?.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(lease?.links.map((l) => l.context.spanId)).toEqual([submit?.spanContext().spanId]);
    expect(lease?.attributes).toMatchObject({ 'messaging.operation.type': 'receive', 'tallyho.job.processor': 'thumbs' });
    expect(granted?.traceparent).toBe(`00-0af7651916cd43dd8448eb211c80319c-${lease?.spanContext().spanId}-01`);
    // Each item keeps the submission's context, for the worker's links.
    const submitted = `00-${submit?.spanContext().traceId}-${submit?.spanContext().spanId}-01`;
    expect(granted?.items.map((i) => i.traceparent)).toEqual(Array(5).fill(submitted));
  });

  it('counts items by outcome, envelope attempts, completions, and reads the backlog from the queues', async () => {
    const memory = memoryTelemetry();
    const h = jobHarness({ settings: { queues: 2 }, telemetry: memory.telemetry });
    const items = [...transactions(40, 5), { ...transactions(1, 6, 'bad')[0]!, id: 'bad-1', currency: 'EURO' }];
    const { job } = await h.jobs.submissions.submit({ processor: 'billing', items }, undefined);

    const before = await memory.collect();
    expect(before.total('tallyho.job.backlog')).toBe(job.envelopes);
    expect(before.total('tallyho.job.poison.backlog')).toBe(0);
    expect(
      before
        .points('tallyho.job.backlog')
        .map((p) => p.attributes['messaging.destination.name'])
        .sort(),
    ).toEqual([...h.queueNames].sort());
    expect(before.total('tallyho.job.items')).toBe(0);

    await h.drain();
    const after = await memory.collect();
    expect(after.total('tallyho.job.backlog')).toBe(0);
    expect(after.total('tallyho.job.items', { 'tallyho.outcome': 'succeeded', 'tallyho.job.processor': 'billing' })).toBe(40);
    expect(after.total('tallyho.job.items', { 'tallyho.outcome': 'failed' })).toBe(1);
    expect(after.total('tallyho.job.envelope.attempts')).toBe(job.envelopes);
    expect(after.total('tallyho.job.completions', { 'tallyho.job.state': 'completedWithFailures' })).toBe(1);
    expect(after.total('tallyho.job.envelopes.poisoned')).toBe(0);
  });

  it('reads the oldest envelope’s age and the poison backlog from the queues: each moves with what waits there', async () => {
    const memory = memoryTelemetry();
    // The app's clock runs ahead on demand: an envelope's age is the app's now less the queue's insertion time.
    let ahead = 0;
    const clock: Clock = { now: () => systemClock.now() + ahead, sleep: (ms, signal) => systemClock.sleep(ms, signal) };
    const h = jobHarness({ settings: { queues: 1 }, telemetry: memory.telemetry, clock });
    const [work] = h.queueNames as [string];
    const { job } = await h.jobs.submissions.submit({ processor: 'billing', items: transactions(10, 3) }, undefined);
    expect(job.envelopes).toBeGreaterThan(0);
    const age = async (): Promise<number> =>
      (await memory.collect()).total('tallyho.job.backlog.age', { 'messaging.destination.name': work });
    expect(await age()).toBeLessThan(600);
    ahead = 900_000;
    // Fifteen minutes on, the envelope still waiting: the job-backlog-age alert's line.
    expect(await age()).toBeGreaterThanOrEqual(900);
    await h.drain();
    expect(await age()).toBe(0);

    // An envelope the host moved to the poison queue, not handled yet: the poison backlog counts it until it is.
    expect((await memory.collect()).total('tallyho.job.poison.backlog')).toBe(0);
    await (await h.queue(poisonQueueName(work))).sendMessage(Buffer.from('{}').toString('base64'));
    expect((await memory.collect()).total('tallyho.job.poison.backlog', { 'messaging.destination.name': poisonQueueName(work) })).toBe(1);
  });

  it('counts poisoned items and the poisoned envelope, in the job’s trace', async () => {
    const memory = memoryTelemetry();
    const h = jobHarness({ settings: { queues: 1 }, telemetry: memory.telemetry });
    const list = transactions(50, 41, 'p');
    list[45] = { ...list[45]!, metadata: { big: 'x'.repeat(20_000) } };
    const { job } = await h.jobs.submissions.submit({ processor: 'billing', items: list }, undefined);
    const container = await h.container();
    // The claim-checked item's blob is gone: its envelope fails every delivery and reaches poison.
    for (const name of await h.blobs()) if (name.includes('/input-')) await container.deleteBlob(name);
    await h.drain({ maxDequeueCount: 2 });

    const collected = await memory.collect();
    expect(collected.total('tallyho.job.envelopes.poisoned', { 'tallyho.job.processor': 'billing' })).toBe(1);
    expect(collected.total('tallyho.job.items', { 'tallyho.outcome': 'poisoned' })).toBe(18);
    expect(collected.points('tallyho.job.envelope.attempts').map((p) => p.max)).toEqual([2]);
    expect(collected.total('tallyho.job.items', { 'tallyho.outcome': 'retried' })).toBe(0);
    const poison = memory.spans().find((s) => s.name === 'tallyho.job.poison');
    const submit = memory.spans().find((s) => s.name === 'tallyho.job.submit');
    expect(poison?.spanContext().traceId).toBe(submit?.spanContext().traceId);
    // The failed deliveries are error spans with the code, not the message (which names a blob).
    // One in the work queue, then maxDequeueCount (2) in the retry lane it moved to.
    const failed = memory.spans().filter((s) => s.name === 'tallyho.job.process' && s.status.code === SpanStatusCode.ERROR);
    expect(failed.length).toBe(3);
    expect(failed.map((s) => s.attributes['error.type'])).toEqual(['CorruptState', 'CorruptState', 'CorruptState']);
    expect(JSON.stringify(failed.map((s) => [s.attributes, s.status, s.events]))).not.toContain('input-');
    expect(job.items).toBe(50);
  });

  it('counts items sent back for another attempt as retried', async () => {
    const memory = memoryTelemetry();
    const flaky = {
      name: 'flaky',
      processItem: (_item: unknown, { attempt }: { attempt: number }) =>
        Promise.resolve(
          attempt < 2 ? { ok: false as const, code: 'busy', reason: 'busy', retryable: true } : { ok: true as const, output: {} },
        ),
      finalize: () => Promise.resolve({}),
    };
    const h = jobHarness({ settings: { queues: 1 }, processors: [flaky], telemetry: memory.telemetry });
    await h.jobs.submissions.submit({ processor: 'flaky', items: [{ id: 'a' }, { id: 'b' }] }, undefined);
    await h.drain();
    const collected = await memory.collect();
    expect(collected.total('tallyho.job.items', { 'tallyho.outcome': 'retried', 'tallyho.job.processor': 'flaky' })).toBe(2);
    expect(collected.total('tallyho.job.items', { 'tallyho.outcome': 'succeeded' })).toBe(2);
  });
});
