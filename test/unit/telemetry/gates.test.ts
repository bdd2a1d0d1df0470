/**
 * The gates capability's telemetry: a release's trace context travels with the release orchestration
 * to its action batches, whose spans (and each action's within) continue it; actions are counted by
 * type and outcome.
 */
import type { EffectPorts } from '../../../shared/effects/runner';
import { performActionBatch } from '../../../shared/gates/actionRunner';
import type { ActionBatchInput, ReleaseFollowUp } from '../../../shared/gates/messages';
import type { RunRecord } from '../../../shared/gates/operations';
import { gateReleaseOrchestrator } from '../../../shared/gates/release.orchestrator';
import type { GateStore, StoredRun } from '../../../shared/gates/store';
import { MemoryLogger } from '../../../shared/log';
import { fakeContext, yielded } from '../gates/fakeOrchestration';
import { memoryTelemetry } from '../../support/telemetry';

const releaseTrace = '00-11111111111111111111111111111111-2222222222222222-01';
const t0 = '2026-01-01T00:00:00.000Z';

function run(runId: string): StoredRun {
  const value = { runId, actionType: 'enqueue' } as unknown as RunRecord;
  return { value, etag: `e-${runId}`, actionJson: JSON.stringify({ type: 'enqueue' }) };
}

describe('gates telemetry', () => {
  it('the release orchestration hands the release’s trace context to every action batch', () => {
    const follow: ReleaseFollowUp = {
      gate: 'launch',
      generation: 1,
      at: t0,
      by: 'alice',
      how: 'api',
      announce: false,
      actions: 120,
      from: 1,
      batchSize: 50,
      trace: releaseTrace,
    };
    const first = yielded(gateReleaseOrchestrator(fakeContext(follow).context).next());
    if (first.kind !== 'all') throw new Error(`expected Task.all, got ${first.kind}`);
    expect(first.tasks.length).toBeGreaterThan(1);
    for (const task of first.tasks) expect(task).toMatchObject({ kind: 'activity', name: 'gateActions', input: { trace: releaseTrace } });
  });

  it('an action batch continues the release’s trace, each action a span within it, counted by outcome', async () => {
    const memory = memoryTelemetry({ callerNames: ['launch'] });
    const recorded: unknown[] = [];
    const store = {
      pendingActions: async function* () {
        yield await Promise.resolve([run('r1'), run('r2')]);
      },
      recordOutcomes: (_gate: string, outcomes: unknown[]) => (recorded.push(...outcomes), Promise.resolve()),
    } as unknown as GateStore;
    let sends = 0;
    // The first send succeeds, the second fails (the effects runner reports it failed).
    const effects = {
      queue: () =>
        ++sends === 1
          ? Promise.resolve({ sendMessage: () => Promise.resolve({ messageId: 'm1' }) })
          : Promise.reject(new Error('queue down')),
    } as unknown as EffectPorts;
    const input: ActionBatchInput = {
      gate: 'launch',
      generation: 1,
      selection: { kind: 'released', shards: [0, 16], from: 1 },
      trace: releaseTrace,
    };
    const deps = {
      store,
      confirmRelease: () => Promise.reject(new Error('unused')),
      effects,
      now: () => Date.parse(t0),
      logger: new MemoryLogger(),
    };
    const result = await performActionBatch({ ...deps, telemetry: memory.telemetry }, input);
    expect(result).toMatchObject({ done: 1, failed: 1, retry: 0 });
    expect(recorded).toHaveLength(2);

    const spans = memory.spans();
    const batch = spans.find((s) => s.name === 'tallyho.gate.actions');
    expect(batch?.spanContext().traceId).toBe('11111111111111111111111111111111');
    expect(batch?.parentSpanContext?.spanId).toBe('2222222222222222');
    const actions = spans.filter((s) => s.name === 'tallyho.gate.run.action');
    expect(actions).toHaveLength(2);
    for (const a of actions) expect(a.parentSpanContext?.spanId).toBe(batch?.spanContext().spanId);

    const collected = await memory.collect();
    expect(collected.total('tallyho.gate.run.actions', { 'tallyho.gate.action.type': 'enqueue', 'tallyho.outcome': 'succeeded' })).toBe(1);
    expect(collected.total('tallyho.gate.run.actions', { 'tallyho.outcome': 'failed' })).toBe(1);
  });

  it('a batch given up records its pending runs failed, and counts them so', async () => {
    const memory = memoryTelemetry();
    const store = {
      pendingActions: async function* () {
        yield await Promise.resolve([run('r1')]);
      },
      recordOutcomes: () => Promise.resolve(),
    } as unknown as GateStore;
    const input: ActionBatchInput = {
      gate: 'launch',
      generation: 1,
      selection: { kind: 'released', shards: [0, 16], from: 1 },
      giveUp: { code: 'DependencyUnavailable', reason: 'down' },
    };
    const deps = {
      store,
      confirmRelease: () => Promise.reject(new Error('unused')),
      effects: {} as EffectPorts,
      now: () => 0,
      logger: new MemoryLogger(),
    };
    expect(await performActionBatch({ ...deps, telemetry: memory.telemetry }, input)).toMatchObject({ failed: 1 });
    expect((await memory.collect()).total('tallyho.gate.run.actions', { 'tallyho.outcome': 'failed' })).toBe(1);
  });
});
