/** The gate's orchestrations stepped by hand: what each schedules, in which order, and what it does with each answer. */
import type { ActionBatchResult } from '../../../shared/gates/actionRunner';
import { gateGenerationOrchestrator } from '../../../shared/gates/generation.orchestrator';
import { gateLateActionsOrchestrator } from '../../../shared/gates/late.orchestrator';
import type { GenerationFollowUp, LateActionsInput, ReleaseFollowUp } from '../../../shared/gates/messages';
import { actionRetryDelaysSeconds, fanOutMaxWaitSeconds, lateRegistrationWaitSeconds } from '../../../shared/gates/names';
import { gateReleaseOrchestrator, shardGroups } from '../../../shared/gates/release.orchestrator';
import { type FakeTask, fakeContext, yielded } from './fakeOrchestration';
import { snapshot } from './fixtures';

const t0 = '2026-01-01T00:00:00.000Z';
const ok = (over: Partial<ActionBatchResult> = {}): ActionBatchResult => ({ done: 1, failed: 0, retry: 0, missing: [], ...over });

function all(task: FakeTask): FakeTask[] {
  if (task.kind !== 'all') throw new Error(`expected Task.all, got ${task.kind}`);
  return task.tasks;
}

describe('action batches', () => {
  test('about one batch per batch size of runs, as 1–16 equal contiguous ranges covering every shard', () => {
    expect(shardGroups(0, 50)).toEqual([[0, 16]]);
    expect(shardGroups(50, 50)).toEqual([[0, 16]]);
    expect(shardGroups(51, 50)).toEqual([
      [0, 8],
      [8, 16],
    ]);
    expect(shardGroups(1000, 50)).toHaveLength(16);
    expect(shardGroups(1_000_000, 1).at(-1)).toEqual([15, 16]);
    expect(shardGroups(300, 50).flatMap(([from, to]) => Array.from({ length: to - from }, (_, i) => from + i))).toEqual(
      Array.from({ length: 16 }, (_, i) => i),
    );
  });
});

describe('release orchestration', () => {
  const base: ReleaseFollowUp = {
    gate: 'g',
    generation: 3,
    at: t0,
    by: 'alice',
    how: 'api',
    announce: true,
    actions: 120,
    from: 2,
    batchSize: 50,
  };

  test('the first round of batches makes the release before its actions, next to the announcement; runs without actions need nothing', () => {
    const orchestration = gateReleaseOrchestrator(fakeContext(base).context);
    const first = all(yielded(orchestration.next()));
    expect(first).toHaveLength(5);
    expect(first.slice(0, 4)).toEqual(
      [
        [0, 4],
        [4, 8],
        [8, 12],
        [12, 16],
      ].map((shards) => ({
        kind: 'activity',
        name: 'gateActions',
        retry: true,
        input: { gate: 'g', generation: 3, selection: { kind: 'released', shards, from: 2 }, confirm: base },
      })),
    );
    expect(first[4]).toMatchObject({ kind: 'activity', name: 'gateAnnounceRelease', input: base });
    expect(orchestration.next([ok(), ok(), ok(), ok(), { published: 'published' }])).toEqual({
      done: true,
      value: { outcome: 'released', actions: { done: 4, failed: 0, abandoned: 0 } },
    });
  });

  const at = (seconds: number): string => new Date(Date.parse(t0) + seconds * 1000).toISOString();
  const stateOf = { kind: 'activity', name: 'gateFanOutState', input: { gate: 'g', generation: 3 } };

  test('when the caller fans the actions out, it announces at once, and after a clean end of its lease one batch only looks', () => {
    const input = { ...base, fanOutLeaseSeconds: 10 };
    const orchestration = gateReleaseOrchestrator(fakeContext(input).context);
    expect(all(yielded(orchestration.next()))).toMatchObject([
      { kind: 'timer', fireAt: at(10) },
      { kind: 'activity', name: 'gateAnnounceRelease', input },
    ]);
    expect(yielded(orchestration.next([undefined, { published: 'published' }]))).toMatchObject(stateOf);
    const sweep = all(yielded(orchestration.next({ state: 'ended', clean: true })));
    expect(sweep).toEqual([
      expect.objectContaining({
        name: 'gateActions',
        input: expect.objectContaining({ selection: { kind: 'released', shards: [0, 16], from: 2 }, confirm: input }),
      }),
    ]);
    expect(orchestration.next([ok({ done: 0 })])).toEqual({
      done: true,
      value: { outcome: 'released', actions: { done: 0, failed: 0, abandoned: 0 } },
    });
  });

  test('while the fan-out renews its lease the sweep waits for what it has left; once it lapses, every batch sweeps (making the release)', () => {
    const input = { ...base, fanOutLeaseSeconds: 10 };
    const fake = fakeContext(input);
    const orchestration = gateReleaseOrchestrator(fake.context);
    yielded(orchestration.next());
    yielded(orchestration.next([undefined, { published: 'published' }]));
    fake.setTime(at(10));
    expect(yielded(orchestration.next({ state: 'running', seconds: 7 }))).toMatchObject({ kind: 'timer', fireAt: at(18) });
    fake.setTime(at(18));
    expect(yielded(orchestration.next())).toMatchObject(stateOf);
    const sweep = all(yielded(orchestration.next({ state: 'none' })));
    expect(sweep).toHaveLength(4);
    for (const batch of sweep) expect(batch).toMatchObject({ kind: 'activity', name: 'gateActions', input: { confirm: input } });
  });

  test('a fan-out that ended uncleanly, a state that cannot be read, or a lease renewed past the longest wait: every batch sweeps', () => {
    const input = { ...base, fanOutLeaseSeconds: 10, announce: false };
    const sweepAfter = (
      answer: (o: Generator<unknown, unknown, unknown>) => IteratorResult<unknown, unknown>,
      time?: string,
    ): FakeTask[] => {
      const fake = fakeContext(input);
      const orchestration = gateReleaseOrchestrator(fake.context);
      expect(all(yielded(orchestration.next()))).toMatchObject([{ kind: 'timer', fireAt: at(10) }]);
      expect(yielded(orchestration.next([undefined]))).toMatchObject(stateOf);
      if (time !== undefined) fake.setTime(time);
      return all(yielded(answer(orchestration)));
    };
    expect(sweepAfter((o) => o.next({ state: 'ended', clean: false }))).toHaveLength(4);
    expect(sweepAfter((o) => o.throw(new Error('storage unavailable')))).toHaveLength(4);
    expect(sweepAfter((o) => o.next({ state: 'running', seconds: 10 }), at(fanOutMaxWaitSeconds))).toHaveLength(4);
  });

  test('an orchestration started before the lease (a grace instead) announces at once and sweeps with its batches (making the release) after the grace', () => {
    const input = { ...base, sweepAfterSeconds: 15 };
    const orchestration = gateReleaseOrchestrator(fakeContext(input).context);
    const wait = all(yielded(orchestration.next()));
    expect(wait).toMatchObject([
      { kind: 'timer', fireAt: new Date(Date.parse(t0) + 15_000).toISOString() },
      { kind: 'activity', name: 'gateAnnounceRelease', input },
    ]);
    const sweep = all(yielded(orchestration.next([undefined, { published: 'published' }])));
    expect(sweep).toHaveLength(4);
    for (const batch of sweep) expect(batch).toMatchObject({ kind: 'activity', name: 'gateActions', input: { confirm: input } });
    expect(orchestration.next([ok({ done: 0 }), ok({ done: 0 }), ok({ done: 0 }), ok()])).toEqual({
      done: true,
      value: { outcome: 'released', actions: { done: 1, failed: 0, abandoned: 0 } },
    });
  });

  test('an announcement that fails after its retries still leaves the sweep waiting for the grace, or for the lease', () => {
    const orchestration = gateReleaseOrchestrator(fakeContext({ ...base, sweepAfterSeconds: 15 }).context);
    yielded(orchestration.next());
    expect(yielded(orchestration.throw(new Error('announce failed')))).toMatchObject({ kind: 'timer', fireAt: at(15) });
    expect(all(yielded(orchestration.next()))).toHaveLength(4);
    const leased = gateReleaseOrchestrator(fakeContext({ ...base, fanOutLeaseSeconds: 10 }).context);
    yielded(leased.next());
    expect(yielded(leased.throw(new Error('announce failed')))).toMatchObject({ kind: 'timer', fireAt: at(10) });
    expect(yielded(leased.next())).toMatchObject(stateOf);
  });

  test('without actions it only announces, and without a Service Bus it schedules nothing', () => {
    const announcing = gateReleaseOrchestrator(fakeContext({ ...base, actions: 0 }).context);
    expect(all(yielded(announcing.next())).map((t) => (t.kind === 'activity' ? t.name : t.kind))).toEqual(['gateAnnounceRelease']);
    const quiet = gateReleaseOrchestrator(fakeContext({ ...base, actions: 0, announce: false }).context);
    expect(all(yielded(quiet.next()))).toEqual([]);
    expect(quiet.next([])).toMatchObject({ done: true });
  });

  test('batches left with retryable failures go again after a pause, without the release; at the end the rest are given up with the last reason', () => {
    const fake = fakeContext({ ...base, actions: 10, announce: false });
    const orchestration = gateReleaseOrchestrator(fake.context);
    yielded(orchestration.next());
    const lastError = { code: 'DependencyUnavailable', reason: 'Storage is unavailable; try again shortly' };
    let step = orchestration.next([ok({ retry: 2, lastError })]);
    for (const [round, pause] of actionRetryDelaysSeconds.entries()) {
      const timer = yielded(step);
      expect(timer).toMatchObject({ kind: 'timer', fireAt: new Date(Date.parse(t0) + pause * 1000).toISOString() });
      const again = all(yielded(orchestration.next()));
      expect(again).toHaveLength(1);
      expect(again[0]).toMatchObject({ name: 'gateActions', input: { selection: { shards: [0, 16] } } });
      expect(again[0]?.kind === 'activity' && 'confirm' in (again[0].input as object)).toBe(false);
      expect(again[0]?.kind === 'activity' && 'giveUp' in (again[0].input as object)).toBe(false);
      step = orchestration.next([ok({ done: 0, retry: 1, lastError: round === 0 ? lastError : undefined })]);
    }
    const giveUp = all(yielded(orchestration.next()));
    expect(giveUp[0]).toMatchObject({ input: { giveUp: lastError } });
    expect(orchestration.next([ok({ done: 0, failed: 1 })])).toMatchObject({ done: true, value: { actions: { done: 1, failed: 1 } } });
  });

  test('a round whose batch failed even after its retries goes again whole', () => {
    const orchestration = gateReleaseOrchestrator(fakeContext({ ...base, actions: 10, announce: false }).context);
    yielded(orchestration.next());
    expect(yielded(orchestration.throw(new Error('activity failed')))).toMatchObject({ kind: 'timer' });
    const again = all(yielded(orchestration.next()));
    expect(again[0]).toMatchObject({ name: 'gateActions', input: { selection: { shards: [0, 16] } } });
  });
});

describe('late actions orchestration', () => {
  const input: LateActionsInput = { gate: 'g', generation: 2, runIds: ['a', 'b'] };

  test('performs the named runs; runs not registered yet are looked for again, then given up', () => {
    const orchestration = gateLateActionsOrchestrator(fakeContext(input).context);
    expect(all(yielded(orchestration.next()))).toEqual([
      {
        kind: 'activity',
        name: 'gateActions',
        retry: true,
        input: { gate: 'g', generation: 2, selection: { kind: 'late', runIds: ['a', 'b'] } },
      },
    ]);
    let step = orchestration.next([ok({ missing: ['b'] })]);
    for (let look = 0; look < lateRegistrationWaitSeconds.length; look++) {
      expect(yielded(step)).toMatchObject({ kind: 'timer' });
      expect(all(yielded(orchestration.next()))[0]).toMatchObject({ input: { selection: { runIds: ['b'] } } });
      step = orchestration.next([ok({ done: 0, missing: ['b'] })]);
    }
    expect(step).toEqual({ done: true, value: { done: 1, failed: 0, abandoned: 1 } });
  });

  test('done at once when every run was there', () => {
    const orchestration = gateLateActionsOrchestrator(fakeContext(input).context);
    orchestration.next();
    expect(orchestration.next([ok({ done: 2 })])).toEqual({ done: true, value: { done: 2, failed: 0, abandoned: 0 } });
  });
});

describe('generation orchestration', () => {
  const base: GenerationFollowUp = { gate: 'g', kind: 'create', generation: 1, by: 'ops', releaseAt: null, announce: true, batchSize: 50 };

  test('finds the create committed (looking again while it is not yet), announces it, done', () => {
    const orchestration = gateGenerationOrchestrator(fakeContext(base).context);
    expect(yielded(orchestration.next())).toMatchObject({
      kind: 'activity',
      name: 'gateOpened',
      input: { gate: 'g', kind: 'create', generation: 1, releaseAt: null },
    });
    expect(yielded(orchestration.next({ opened: 'absent' }))).toMatchObject({ kind: 'timer' });
    expect(yielded(orchestration.next())).toMatchObject({ name: 'gateOpened' });
    const gate = snapshot();
    expect(yielded(orchestration.next({ opened: 'opened', gate }))).toMatchObject({
      name: 'gateAnnounce',
      input: { kind: 'create', gate, by: 'ops', how: 'api' },
    });
    expect(orchestration.next({ published: 'published' })).toEqual({ done: true, value: { opened: 'opened' } });
  });

  test('a change that never committed is abandoned; one that lost to another schedule stops', () => {
    const never = gateGenerationOrchestrator(fakeContext(base).context);
    let step = never.next();
    for (let n = 0; n < lateRegistrationWaitSeconds.length; n++) {
      yielded(never.next({ opened: 'absent' }));
      step = never.next();
    }
    expect(yielded(step)).toMatchObject({ name: 'gateOpened' });
    expect(never.next({ opened: 'absent' })).toEqual({ done: true, value: { opened: 'abandoned' } });
    const lost = gateGenerationOrchestrator(fakeContext({ ...base, releaseAt: '2026-02-01T00:00:00.000Z' }).context);
    lost.next();
    expect(lost.next({ opened: 'other' })).toEqual({ done: true, value: { opened: 'other' } });
  });

  test('a scheduled generation releases itself when the timer fires, through the release use-case', () => {
    const releaseAt = '2026-02-01T00:00:00.000Z';
    const fake = fakeContext({ ...base, kind: 'reset', generation: 4, releaseAt, announce: false });
    const orchestration = gateGenerationOrchestrator(fake.context);
    orchestration.next();
    const race = yielded(orchestration.next({ opened: 'opened', gate: snapshot({ generation: 4, releaseAt }) }));
    if (race.kind !== 'any') throw new Error('expected a race');
    const [timer, cancel] = race.tasks;
    expect(timer).toMatchObject({ kind: 'timer', fireAt: releaseAt });
    expect(cancel).toEqual({ kind: 'event', name: 'GateScheduleCancelled' });
    fake.setTime(releaseAt);
    expect(yielded(orchestration.next(timer))).toEqual({
      kind: 'activity',
      name: 'gateScheduledRelease',
      retry: true,
      input: { gate: 'g', generation: 4, by: 'ops', at: releaseAt },
    });
    expect(orchestration.next('released')).toEqual({ done: true, value: { opened: 'opened', schedule: 'fired', release: 'released' } });
  });

  test('a cancelled schedule cancels its timer and releases nothing', () => {
    const releaseAt = '2026-02-01T00:00:00.000Z';
    const orchestration = gateGenerationOrchestrator(fakeContext({ ...base, releaseAt, announce: false }).context);
    orchestration.next();
    const race = yielded(orchestration.next({ opened: 'opened', gate: snapshot({ releaseAt }) }));
    if (race.kind !== 'any') throw new Error('expected a race');
    const [timer, cancel] = race.tasks;
    expect(orchestration.next(cancel)).toEqual({ done: true, value: { opened: 'opened', schedule: 'cancelled' } });
    expect(timer?.kind === 'timer' && timer.cancel).toHaveBeenCalledTimes(1);
  });
});
