/**
 * Schedules and streams telemetry, from the activities that do their I/O (orchestrations and entities
 * are replayed and record nothing): lateness and runs by outcome; flush lag, flushed events and flush
 * errors. The appends' own metrics (accepted, duplicates) and the buffer depth read from the writers'
 * state are in streamsAppend.test.ts.
 */
import { creatorOf } from '../../../shared/schedules/creator';
import { logActivities } from '../../../shared/streams/activities';
import type { FlushBatch } from '../../../shared/streams/writerState';
import { scheduleHarness } from '../../support/schedules';
import { storageFor } from '../../support/sequences';
import { runStorage } from '../../support/storageAccounts';
import { memoryTelemetry } from '../../support/telemetry';

const tester = creatorOf('tester', 'function', 'key:shared');
const unique = (prefix: string): string => `${prefix}-${Math.random().toString(16).slice(2, 10)}`;

describe('schedules telemetry', () => {
  it('records how late a scheduled fire ran, and counts runs by outcome and target type', async () => {
    const memory = memoryTelemetry({ callerNames: ['nightly'] });
    const h = scheduleHarness({ telemetry: memory.telemetry });
    const target = { type: 'queueMessage' as const, queue: unique('app-out'), message: 'hi' };
    await h.service.create({ id: 'nightly', cron: '0 0 * * * *', target }, tester);
    await h.activities.checkpoint({
      scheduleId: 'nightly',
      now: '2027-01-01T00:00:00.000Z',
      nextFireAt: '2027-01-01T01:00:00.000Z',
      records: [],
    });
    // Due at 01:00, started 2.5 s late on the orchestration's clock.
    const fire = { at: '2027-01-01T01:00:00.000Z', kind: 'scheduled' as const };
    await h.activities.run({ scheduleId: 'nightly', runId: 'nightly#1', fire, now: '2027-01-01T01:00:02.500Z', nextFireAt: null });
    await h.service.pause('nightly');
    await h.activities.run({ scheduleId: 'nightly', runId: 'nightly#2', fire, now: fire.at, nextFireAt: null });
    await h.activities.checkpoint({
      scheduleId: 'nightly',
      now: '2027-01-01T03:00:00.000Z',
      nextFireAt: null,
      records: [{ at: '2027-01-01T02:00:00.000Z', kind: 'scheduled', outcome: 'missed', count: 3, reason: 'down' }],
    });

    const collected = await memory.collect();
    const lateness = collected.points('tallyho.schedule.lateness');
    expect(lateness.map((p) => [p.attributes, p.value, p.max])).toEqual([[{ 'tallyho.schedule.id': 'nightly' }, 1, 2.5]]);
    const runs = (outcome: string) => collected.total('tallyho.schedule.runs', { 'tallyho.outcome': outcome });
    expect([runs('succeeded'), runs('refused'), runs('missed')]).toEqual([1, 1, 3]);
    expect(collected.total('tallyho.schedule.runs', { 'tallyho.schedule.target.type': 'queueMessage' })).toBe(5);
    // The run that went ahead sent its queue message inside its own span (the message carries that trace).
    const spans = memory.spans();
    expect(spans.map((s) => [s.name, s.attributes])).toEqual([
      [
        'tallyho.effect.send',
        { 'messaging.operation.name': 'send', 'messaging.operation.type': 'send', 'messaging.system': 'azure_storage_queues' },
      ],
      ['tallyho.schedule.run', { 'tallyho.schedule.id': 'nightly', 'tallyho.schedule.target.type': 'queueMessage' }],
    ]);
    const [send, run] = spans;
    expect(send?.parentSpanContext?.spanId).toBe(run?.spanContext().spanId);
  });

  it('counts a run whose target failed as failed (the schedule-runs-failed alert’s state)', async () => {
    const memory = memoryTelemetry({ callerNames: ['monthly'] });
    const h = scheduleHarness({ telemetry: memory.telemetry });
    // The harness has no jobs capability: a job target is admitted, and its run fails for want of one.
    const target = { type: 'job' as const, processor: 'billing', items: [{ id: 'a' }] };
    await h.service.create({ id: 'monthly', cron: '0 0 0 1 * *', target }, tester);
    expect((await memory.collect()).total('tallyho.schedule.runs', { 'tallyho.outcome': 'failed' })).toBe(0);
    const fire = { at: '2027-02-01T00:00:00.000Z', kind: 'scheduled' as const };
    const outcome = await h.activities.run({ scheduleId: 'monthly', runId: 'monthly#1', fire, now: fire.at, nextFireAt: null });
    expect(outcome.outcome).toBe('failed');
    const collected = await memory.collect();
    expect(collected.total('tallyho.schedule.runs', { 'tallyho.outcome': 'failed', 'tallyho.schedule.target.type': 'job' })).toBe(1);
    expect(collected.total('tallyho.schedule.runs', { 'tallyho.outcome': 'succeeded' })).toBe(0);
  });
});

describe('streams telemetry', () => {
  it('the append activity records flushed events, flush lag, and counts a failed write', async () => {
    const memory = memoryTelemetry();
    const storage = storageFor(runStorage());
    const container = unique('strm');
    const now = Date.parse('2027-01-01T00:00:10.000Z');
    const activities = logActivities(
      () => storage.container(container),
      { now: () => now, sleep: () => Promise.resolve() },
      memory.telemetry,
    );
    const address = { partition: 'p0', resource: 'orders' };
    const cursor = await activities.open(address);
    const text = '{"n":1}\n{"n":2}\n';
    const batch: FlushBatch = {
      id: 1,
      ...address,
      text,
      count: 2,
      bytes: Buffer.byteLength(text),
      firstIndex: 0,
      cursor,
      maxBlockBytes: 4 * 1024 * 1024,
      maxBlocksPerBlob: 50_000,
      attempts: 0,
      oldestAt: now - 4000,
    };
    await activities.append(batch);
    // A batch whose cursor is past the blob's end cannot be appended.
    await expect(activities.append({ ...batch, id: 2, cursor: { ...cursor, position: 10_000 } })).rejects.toThrow();
    const collected = await memory.collect();
    expect(collected.total('tallyho.stream.events.flushed', { 'tallyho.stream.partition': 'p0' })).toBe(2);
    expect(collected.points('tallyho.stream.flush.lag').map((p) => [p.value, p.max])).toEqual([[1, 4]]);
    expect(collected.total('tallyho.stream.flush.errors', { 'tallyho.stream.partition': 'p0' })).toBe(1);
    // The buffer depth is not the activity's to record: it is read from the writers' state at collection (depthGauge.ts).
    expect(collected.points('tallyho.stream.buffer.depth')).toEqual([]);
  });
});
