/**
 * The gates capability's telemetry: a release's trace context travels with its event to the runs,
 * whose actions continue it; the fan-out, releases, waiting runs and actions are counted.
 */
import type { DurableClient } from '../../../shared/durable/client';
import type { EffectPorts } from '../../../shared/effects/runner';
import { announce, notifyWaiters, performAction } from '../../../shared/gates/activities';
import type { GateAuditLog } from '../../../shared/gates/audit';
import type { GateReleasedEvent, RunInput } from '../../../shared/gates/messages';
import type { GateEventPublisher } from '../../../shared/gates/publisher';
import { gateRunOrchestrator } from '../../../shared/gates/run.orchestrator';
import type { GateWatchHub } from '../../../shared/gates/watchHub';
import { fakeContext, yielded } from '../gates/fakeOrchestration';
import { snapshot } from '../gates/fixtures';
import { memoryTelemetry } from '../../support/telemetry';

const releaseTrace = '00-11111111111111111111111111111111-2222222222222222-01';
const release = { generation: 1, at: '2026-01-01T00:00:00.000Z', by: 'alice', how: 'api' as const };
const event: GateReleasedEvent = { gate: 'launch', generation: 1, release, trace: releaseTrace };

describe('gates telemetry', () => {
  it('a run takes the release event’s trace context into its action', () => {
    const input: RunInput = { gate: 'launch', runId: 'r1', action: { type: 'enqueue' }, maxWaiters: 10 };
    const run = gateRunOrchestrator(fakeContext(input, 'gate:launch:run:r1').context);
    run.next();
    run.next({ outcome: 'waiting', generation: 1 });
    expect(yielded(run.next(event))).toMatchObject({ kind: 'activity', name: 'gateAction', input: { trace: releaseTrace } });
  });

  it('a notify batch continues the release’s trace and records, per delivered run, the time since the release', async () => {
    const memory = memoryTelemetry({ callerNames: ['launch'] });
    const client = {
      raiseEvent: (instanceId: string) => Promise.resolve(instanceId === 'gone' ? ('gone' as const) : ('delivered' as const)),
    } as unknown as DurableClient;
    const now = Date.parse(release.at) + 1500;
    const result = await notifyWaiters(client, { event, waiters: ['a', 'b', 'gone'] }, { telemetry: memory.telemetry, now: () => now });
    expect(result).toEqual({ delivered: 2, gone: 1 });
    const [notify] = memory.spans();
    expect(notify?.name).toBe('tallyho.gate.notify');
    expect(notify?.spanContext().traceId).toBe('11111111111111111111111111111111');
    expect(notify?.parentSpanContext?.spanId).toBe('2222222222222222');
    const fanout = (await memory.collect()).points('tallyho.gate.release.fanout.duration');
    expect(fanout.map((p) => [p.attributes, p.value, p.max])).toEqual([[{ 'tallyho.gate.name': 'launch' }, 2, 1.5]]);
  });

  it('an action runs in the release’s trace and is counted by type and outcome', async () => {
    const memory = memoryTelemetry();
    const queued: string[] = [];
    const ports = {
      queue: () => Promise.resolve({ sendMessage: (text: string) => (queued.push(text), Promise.resolve({ messageId: 'm1' })) }),
    } as unknown as EffectPorts;
    const failing = { queue: () => Promise.reject(new Error('queue down')) } as unknown as EffectPorts;
    const input = { gate: 'launch', generation: 1, runId: 'r1', action: { type: 'enqueue' as const }, trace: releaseTrace };
    await performAction(ports, input, memory.telemetry);
    await expect(performAction(failing, input, memory.telemetry)).rejects.toThrow();
    const collected = await memory.collect();
    expect(collected.total('tallyho.gate.run.actions', { 'tallyho.gate.action.type': 'enqueue', 'tallyho.outcome': 'succeeded' })).toBe(1);
    expect(collected.total('tallyho.gate.run.actions', { 'tallyho.outcome': 'failed' })).toBe(1);
    expect(memory.spans().map((s) => [s.name, s.spanContext().traceId])).toEqual([
      ['tallyho.gate.run.action', '11111111111111111111111111111111'],
      ['tallyho.gate.run.action', '11111111111111111111111111111111'],
    ]);
    expect(queued).toHaveLength(1);
  });

  it('an announced release is counted, and the waiting runs it found recorded (names left out by default)', async () => {
    const memory = memoryTelemetry();
    const deps = {
      audit: { record: () => Promise.resolve() } as unknown as GateAuditLog,
      hub: { publish: () => undefined } as unknown as GateWatchHub,
      publisher: { publish: () => Promise.resolve('notConfigured' as const) } as unknown as GateEventPublisher,
      now: () => Date.parse(release.at),
      telemetry: memory.telemetry,
    };
    const closed = snapshot({ name: 'launch', waiters: { waiting: 7, registered: 7, late: 0, proceeded: 0 } });
    await announce(deps, { kind: 'create', gate: closed, by: 'ops', how: 'api' });
    await announce(deps, { kind: 'release', gate: { ...closed, state: 'released', release }, by: 'alice', how: 'api' });
    const collected = await memory.collect();
    expect(collected.points('tallyho.gate.releases').map((p) => [p.attributes, p.value])).toEqual([
      [{ 'tallyho.gate.release.how': 'api' }, 1],
    ]);
    expect(collected.points('tallyho.gate.runs.waiting').map((p) => [p.attributes, p.value])).toEqual([[{}, 7]]);
  });
});
