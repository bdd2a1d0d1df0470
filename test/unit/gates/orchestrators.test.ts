/** The gate orchestrators, stepped with a fake context: what they ask Durable for and what they decide. */
import { gateGenerationOrchestrator } from '../../../shared/gates/generation.orchestrator';
import type { GateReleasedEvent, GenerationInput, ReleaseInput, RunInput } from '../../../shared/gates/messages';
import { gateReleaseOrchestrator } from '../../../shared/gates/release.orchestrator';
import { gateRunOrchestrator } from '../../../shared/gates/run.orchestrator';
import { fakeContext, yielded } from './fakeOrchestration';
import { snapshot } from './fixtures';

const release1 = { generation: 1, at: '2026-01-01T00:05:00.000Z', by: 'alice', how: 'api' as const };

describe('gated run', () => {
  const input: RunInput = { gate: 'g', runId: 'r1', action: { type: 'none' }, maxWaiters: 50 };
  const event = (generation: number): GateReleasedEvent => ({ gate: 'g', generation, release: { ...release1, generation } });

  test('registers first, waits, ignores events of older generations and malformed ones, then proceeds once', () => {
    const fake = fakeContext(input, 'gate:g:run:r1');
    const run = gateRunOrchestrator(fake.context);
    expect(yielded(run.next())).toEqual({
      kind: 'entity',
      entity: '@gate@g',
      operation: 'register',
      input: { waiter: 'gate:g:run:r1', maxWaiters: 50 },
    });
    expect(yielded(run.next({ outcome: 'waiting', generation: 2 }))).toEqual({ kind: 'event', name: 'GateReleased' });
    expect(yielded(run.next(event(1)))).toEqual({ kind: 'event', name: 'GateReleased' });
    expect(yielded(run.next({ nonsense: true }))).toEqual({ kind: 'event', name: 'GateReleased' });
    fake.setTime('2026-01-01T00:05:01.000Z');
    const done = run.next(event(2));
    expect(done.done).toBe(true);
    expect(done.value).toMatchObject({
      generation: 2,
      late: false,
      release: { generation: 2, by: 'alice' },
      registeredAt: '2026-01-01T00:00:00.000Z',
      proceededAt: '2026-01-01T00:05:01.000Z',
      action: { type: 'none' },
    });
    expect(fake.signals).toEqual([{ entity: '@gate@g', operation: 'proceeded', input: { generation: 2, waiter: 'gate:g:run:r1' } }]);
    expect(fake.statuses).toEqual([{ phase: 'registering' }, { phase: 'waiting', generation: 2 }, { phase: 'proceeding', generation: 2 }]);
  });

  test('a run carried over by a reset accepts the release of the newer generation', () => {
    const run = gateRunOrchestrator(fakeContext(input).context);
    run.next();
    run.next({ outcome: 'waiting', generation: 1 });
    expect(run.next(event(2))).toMatchObject({ done: true, value: { generation: 2 } });
  });

  test('a late joiner proceeds at once without waiting for an event', () => {
    const run = gateRunOrchestrator(fakeContext(input).context);
    run.next();
    expect(run.next({ outcome: 'released', generation: 1, release: release1 })).toMatchObject({
      done: true,
      value: { late: true, release: release1 },
    });
  });

  test('an enqueue action runs in an activity after the release', () => {
    const run = gateRunOrchestrator(fakeContext({ ...input, action: { type: 'enqueue', payload: { n: 1 } } }).context);
    run.next();
    const action = yielded(run.next({ outcome: 'released', generation: 1, release: release1 }));
    expect(action).toEqual({
      kind: 'activity',
      name: 'gateAction',
      retry: true,
      input: { gate: 'g', generation: 1, runId: 'r1', action: { type: 'enqueue', payload: { n: 1 } } },
    });
    expect(run.next({ type: 'enqueue', queue: 'gate-actions', messageId: 'm' })).toMatchObject({
      done: true,
      value: { action: { type: 'enqueue', messageId: 'm' } },
    });
  });

  test('a missing gate or a full generation fails the run', () => {
    const missing = gateRunOrchestrator(fakeContext(input).context);
    missing.next();
    expect(() => missing.next({ outcome: 'missing' })).toThrow('Gate "g" does not exist');
    const full = gateRunOrchestrator(fakeContext(input).context);
    full.next();
    expect(() => full.next({ outcome: 'full', generation: 1, limit: 50 })).toThrow('already has 50 waiting runs');
  });
});

describe('release orchestration', () => {
  const input: ReleaseInput = { gate: 'g', generation: 1, by: 'alice', how: 'api', notifyBatchSize: 2 };

  test('asks the entity, reports its answer at once, then pushes the release in batches next to the announcement', () => {
    const fake = fakeContext(input, 'gate:g:release:1', release1.at);
    const orchestration = gateReleaseOrchestrator(fake.context);
    expect(yielded(orchestration.next())).toEqual({
      kind: 'entity',
      entity: '@gate@g',
      operation: 'release',
      input: { generation: 1, at: release1.at, by: 'alice', how: 'api' },
    });
    const released = snapshot({ state: 'released', release: release1 });
    const all = yielded(orchestration.next({ outcome: 'released', gate: released, waiters: ['a', 'b', 'c', 'd', 'e'] }));
    expect(fake.statuses).toEqual([{ outcome: 'released', gate: released }]);
    const event = { gate: 'g', generation: 1, release: release1 };
    expect(all).toEqual({
      kind: 'all',
      tasks: [
        { kind: 'activity', name: 'gateNotify', retry: true, input: { event, waiters: ['a', 'b'] } },
        { kind: 'activity', name: 'gateNotify', retry: true, input: { event, waiters: ['c', 'd'] } },
        { kind: 'activity', name: 'gateNotify', retry: true, input: { event, waiters: ['e'] } },
        { kind: 'activity', name: 'gateAnnounce', retry: true, input: { kind: 'release', gate: released, by: 'alice', how: 'api' } },
      ],
    });
    const done = orchestration.next([
      { delivered: 2, gone: 0 },
      { delivered: 1, gone: 1 },
      { delivered: 1, gone: 0 },
      { audited: true, published: 'notConfigured' },
    ]);
    expect(done).toEqual({ done: true, value: { result: { outcome: 'released', gate: released }, pushed: 5, gone: 1 } });
  });

  test('an already released or superseded generation pushes nothing and announces nothing', () => {
    for (const outcome of ['alreadyReleased', 'superseded'] as const) {
      const orchestration = gateReleaseOrchestrator(fakeContext(input).context);
      orchestration.next();
      const gate = snapshot({ state: 'released', release: release1 });
      expect(orchestration.next({ outcome, gate })).toEqual({ done: true, value: { result: { outcome, gate }, pushed: 0, gone: 0 } });
    }
  });
});

describe('generation orchestration', () => {
  const base: GenerationInput = { gate: 'g', kind: 'create', by: 'ops', releaseAt: null, notifyBatchSize: 10 };

  test('create without a schedule: entity, status, audit announcement, done', () => {
    const fake = fakeContext(base);
    const orchestration = gateGenerationOrchestrator(fake.context);
    expect(yielded(orchestration.next())).toMatchObject({ kind: 'entity', operation: 'create', input: { name: 'g', releaseAt: null } });
    const gate = snapshot();
    const announce = yielded(orchestration.next({ created: true, gate }));
    expect(fake.statuses).toEqual([{ opened: { outcome: 'created', gate } }]);
    expect(announce).toMatchObject({ kind: 'activity', name: 'gateAnnounce', input: { kind: 'create', by: 'ops', how: 'api' } });
    expect(orchestration.next({ audited: true, published: 'notConfigured' })).toEqual({
      done: true,
      value: { opened: { outcome: 'created', gate } },
    });
  });

  test('an existing gate is reported and nothing is announced or scheduled', () => {
    const orchestration = gateGenerationOrchestrator(fakeContext({ ...base, releaseAt: '2026-02-01T00:00:00.000Z' }).context);
    orchestration.next();
    expect(orchestration.next({ created: false, gate: snapshot() })).toMatchObject({
      done: true,
      value: { opened: { outcome: 'exists' } },
    });
  });

  test('a scheduled generation releases itself when the timer fires, as the schedule', () => {
    const releaseAt = '2026-02-01T00:00:00.000Z';
    const fake = fakeContext({ ...base, kind: 'reset', fromGeneration: 3, releaseAt });
    const orchestration = gateGenerationOrchestrator(fake.context);
    expect(yielded(orchestration.next())).toMatchObject({ operation: 'reset', input: { fromGeneration: 3, releaseAt } });
    const gate = snapshot({ generation: 4, releaseAt });
    orchestration.next({ outcome: 'reset', gate, carried: 2 });
    const race = yielded(orchestration.next({ audited: true, published: 'published' }));
    if (race.kind !== 'any') throw new Error('expected a race');
    const [timer, cancel] = race.tasks;
    expect(timer).toMatchObject({ kind: 'timer', fireAt: releaseAt });
    expect(cancel).toEqual({ kind: 'event', name: 'GateScheduleCancelled' });
    fake.setTime(releaseAt);
    expect(yielded(orchestration.next(timer))).toEqual({
      kind: 'entity',
      entity: '@gate@g',
      operation: 'release',
      input: { generation: 4, at: releaseAt, by: 'ops', how: 'schedule' },
    });
    const released = snapshot({ generation: 4, state: 'released', release: { generation: 4, at: releaseAt, by: 'ops', how: 'schedule' } });
    const push = yielded(orchestration.next({ outcome: 'released', gate: released, waiters: ['a'] }));
    expect(push.kind).toBe('all');
    expect(fake.statuses.at(-1)).toMatchObject({
      opened: { outcome: 'reset', carried: 2 },
      schedule: 'fired',
      release: { outcome: 'released' },
    });
    expect(
      orchestration.next([
        { delivered: 1, gone: 0 },
        { audited: true, published: 'published' },
      ]),
    ).toMatchObject({
      done: true,
      value: { release: { pushed: 1 } },
    });
  });

  test('a cancelled schedule cancels its timer and releases nothing', () => {
    const releaseAt = '2026-02-01T00:00:00.000Z';
    const fake = fakeContext({ ...base, releaseAt });
    const orchestration = gateGenerationOrchestrator(fake.context);
    orchestration.next();
    orchestration.next({ created: true, gate: snapshot({ releaseAt }) });
    const race = yielded(orchestration.next({ audited: true, published: 'notConfigured' }));
    if (race.kind !== 'any') throw new Error('expected a race');
    const [timer, cancel] = race.tasks;
    expect(orchestration.next(cancel)).toMatchObject({ done: true, value: { scheduleCancelled: true } });
    expect(timer?.kind === 'timer' && timer.cancel).toHaveBeenCalledTimes(1);
    expect(fake.statuses.at(-1)).toMatchObject({ schedule: 'cancelled' });
  });
});
