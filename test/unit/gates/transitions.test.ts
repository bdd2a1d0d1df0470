/** The gate's state rules: generations, exactly-once release, late joiners, resets, and each run's state derived from them. */
import type { GateRecord, ReleaseInfo, RunRecord } from '../../../shared/gates/operations';
import { admit, create, earlierReleaseNeeded, release, reset, runStateOf } from '../../../shared/gates/transitions';

const t0 = '2026-01-01T00:00:00.000Z';
const t1 = '2026-01-01T00:01:00.000Z';
const t2 = '2026-01-01T00:02:00.000Z';
const t3 = '2026-01-01T00:03:00.000Z';

function created(releaseAt: string | null = null): GateRecord {
  const { record } = create(undefined, { name: 'g', at: t0, releaseAt });
  if (record === undefined) throw new Error('not created');
  return record;
}

/** The gate after admitting runs, `true` for a run with an action. */
function withRuns(record: GateRecord, ...withAction: boolean[]): GateRecord {
  return admit(record, { withAction, maxWaiters: 100 }).record as GateRecord;
}

const releaseBy = (generation?: number, at = t1) => ({
  ...(generation === undefined ? {} : { generation }),
  at,
  by: 'alice',
  how: 'api' as const,
});

function released(record: GateRecord, generation?: number, at = t1): GateRecord {
  return release(record, releaseBy(generation, at)).record as GateRecord;
}

function run(generation: number, late = false, runId = 'r'): RunRecord {
  return {
    gate: 'g',
    runId,
    generation,
    late,
    registeredAt: t2,
    fingerprint: 'f',
    actionType: 'none',
    outcome: undefined,
  };
}

describe('create', () => {
  test('makes a closed gate at generation 1 with the schedule, nobody waiting', () => {
    const { record, result } = create(undefined, { name: 'g', at: t0, releaseAt: t2 });
    expect(result).toMatchObject({ created: true, gate: { name: 'g', generation: 1, state: 'closed', releaseAt: t2, release: null } });
    expect(record).toMatchObject({ openSince: 1, counts: { waiting: 0, registered: 0, late: 0, actionsWaiting: 0 } });
  });

  test('creating again changes nothing and reports the existing gate', () => {
    const existing = withRuns(created(), false);
    const { record, result } = create(existing, { name: 'g', at: t2, releaseAt: t2 });
    expect(record).toBe(existing);
    expect(result).toMatchObject({ created: false, gate: { createdAt: t0, releaseAt: null, waiters: { waiting: 1 } } });
  });
});

describe('admit', () => {
  test('a missing gate is reported and not created', () => {
    expect(admit(undefined, { withAction: [false], maxWaiters: 10 })).toEqual({ record: undefined, result: { outcome: 'missing' } });
  });

  test('a closed gate counts the runs as waiting for its generation, and those with an action apart', () => {
    const { record, result } = admit(created(), { withAction: [false, true, true], maxWaiters: 10 });
    expect(result).toEqual({ outcome: 'waiting', generation: 1, accepted: 3, limit: 10 });
    expect(record?.counts).toEqual({ waiting: 3, registered: 3, late: 0, actionsWaiting: 2 });
  });

  test('a generation takes runs up to the limit and no more: the rest are refused and nothing else changes', () => {
    const nearlyFull = withRuns(created(), false, false);
    const { record, result } = admit(nearlyFull, { withAction: [true, false, true], maxWaiters: 3 });
    expect(result).toEqual({ outcome: 'waiting', generation: 1, accepted: 1, limit: 3 });
    expect(record?.counts).toEqual({ waiting: 3, registered: 3, late: 0, actionsWaiting: 1 });
    const full = admit(record, { withAction: [false], maxWaiters: 3 });
    expect(full.result).toMatchObject({ accepted: 0 });
    expect(full.record).toBe(record);
  });

  test('after the release runs register late, with the release, however many, and count as late', () => {
    const gate = released(withRuns(created(), false), 1);
    const { record, result } = admit(gate, { withAction: [false, true], maxWaiters: 1 });
    expect(result).toEqual({ outcome: 'late', generation: 1, accepted: 2, release: { generation: 1, at: t1, by: 'alice', how: 'api' } });
    expect(record?.counts).toEqual({ waiting: 0, registered: 1, late: 2, actionsWaiting: 0 });
  });
});

describe('release', () => {
  test('releases the current generation once: every waiting run is let go, and the release says how many have actions', () => {
    const gate = withRuns(created(), false, true, true);
    const first = release(gate, releaseBy(1));
    expect(first.result).toMatchObject({
      outcome: 'released',
      gate: { state: 'released', waiters: { waiting: 0, registered: 3, late: 0, proceeded: 3 } },
      release: { generation: 1, at: t1, by: 'alice', how: 'api', from: 1, actions: 2 },
    });
    expect(first.record?.counts.actionsWaiting).toBe(0);

    const second = release(first.record, { generation: 1, at: t2, by: 'bob', how: 'api' });
    expect(second.record).toBe(first.record);
    expect(second.result).toMatchObject({ outcome: 'alreadyReleased', gate: { release: { by: 'alice', at: t1 } } });
  });

  test('without a generation it releases whatever is current', () => {
    expect(release(created(), releaseBy()).result.outcome).toBe('released');
  });

  test('a release of an older generation is superseded and changes nothing', () => {
    const gen2 = reset(released(created(), 1), { fromGeneration: 1, at: t2, releaseAt: null }).record;
    const stale = release(gen2, releaseBy(1));
    expect(stale.result).toMatchObject({ outcome: 'superseded', gate: { generation: 2, state: 'closed' } });
    expect(stale.record).toBe(gen2);
  });

  test('keeps the note', () => {
    const { result } = release(created(), { ...releaseBy(1), note: 'go' });
    expect(result).toMatchObject({ gate: { release: { note: 'go' } } });
  });

  test('of a missing gate is reported', () => {
    expect(release(undefined, releaseBy(1)).result).toEqual({ outcome: 'missing' });
  });

  test('late joiners after the release count as proceeded at once', () => {
    const gate = withRuns(released(withRuns(created(), false, false), 1), false);
    expect(release(gate, releaseBy(1)).result).toMatchObject({ gate: { waiters: { registered: 2, late: 1, proceeded: 3 } } });
  });
});

describe('reset', () => {
  test('a released gate becomes closed with the next generation, nobody waiting, counts cleared', () => {
    const { record, result } = reset(released(withRuns(created(t2), true), 1), { fromGeneration: 1, at: t2, releaseAt: null });
    expect(result).toMatchObject({
      outcome: 'reset',
      carried: 0,
      gate: { generation: 2, state: 'closed', release: null, releaseAt: null },
    });
    expect(record).toMatchObject({
      generationStartedAt: t2,
      createdAt: t0,
      openSince: 2,
      counts: { waiting: 0, registered: 0, late: 0, actionsWaiting: 0 },
    });
  });

  test('runs waiting on a closed gate are carried into the new generation and released with it', () => {
    const { record, result } = reset(withRuns(created(), false, true), { fromGeneration: 1, at: t2, releaseAt: t3 });
    expect(result).toMatchObject({
      outcome: 'reset',
      carried: 2,
      gate: { generation: 2, releaseAt: t3, waiters: { waiting: 2, registered: 2 } },
    });
    expect(record).toMatchObject({ openSince: 1, counts: { actionsWaiting: 1 } });
    expect(release(record, releaseBy(2)).result).toMatchObject({ outcome: 'released', release: { generation: 2, from: 1, actions: 1 } });
  });

  test('a second reset from the same generation changes nothing (concurrent resets make one generation)', () => {
    const once = reset(created(), { fromGeneration: 1, at: t1, releaseAt: null });
    const twice = reset(once.record, { fromGeneration: 1, at: t2, releaseAt: null });
    expect(twice.record).toBe(once.record);
    expect(twice.result).toMatchObject({ outcome: 'alreadyReset', gate: { generation: 2 } });
  });
});

describe("a run's state", () => {
  const gen1Release: ReleaseInfo = { generation: 1, at: t1, by: 'alice', how: 'api' };

  test('waits while its gate is closed, on the current generation — also when it was carried over by resets', () => {
    const gate = reset(reset(created(), { fromGeneration: 1, at: t1, releaseAt: null }).record, {
      fromGeneration: 2,
      at: t2,
      releaseAt: null,
    }).record as GateRecord;
    expect(earlierReleaseNeeded(run(1), gate)).toBeUndefined();
    expect(runStateOf(run(1), gate)).toEqual({ state: 'waiting', generation: 3 });
  });

  test('proceeds at the release, with the release: the gate record alone tells it', () => {
    const gate = released(withRuns(created(), false), 1);
    expect(runStateOf(run(1), gate)).toEqual({ state: 'proceeded', generation: 1, release: gen1Release, proceededAt: t1 });
  });

  test('a carried run proceeds with the release of the generation it was carried into', () => {
    const gate = released(reset(created(), { fromGeneration: 1, at: t1, releaseAt: null }).record as GateRecord, 2, t3);
    expect(runStateOf(run(1), gate)).toMatchObject({ state: 'proceeded', generation: 2, proceededAt: t3 });
  });

  test('a late run proceeded when it registered', () => {
    const gate = released(created(), 1);
    expect(runStateOf(run(1, true), gate)).toEqual({ state: 'proceeded', generation: 1, release: gen1Release, proceededAt: t2 });
  });

  test('once the gate moved on, a run needs the first release at or after its own generation, and proceeded with that', () => {
    const gate = reset(released(created(), 1), { fromGeneration: 1, at: t2, releaseAt: null }).record as GateRecord;
    expect(earlierReleaseNeeded(run(1), gate)).toBe(1);
    expect(earlierReleaseNeeded(run(1, true), gate)).toBe(1);
    expect(runStateOf(run(1), gate, gen1Release)).toEqual({ state: 'proceeded', generation: 1, release: gen1Release, proceededAt: t1 });
    expect(() => runStateOf(run(1), gate)).toThrow(/needs the release of generation 1/);
  });

  test('a run of the new generation waits, a stale release notwithstanding', () => {
    const gate = reset(released(created(), 1), { fromGeneration: 1, at: t2, releaseAt: null }).record as GateRecord;
    expect(runStateOf(run(2), gate)).toEqual({ state: 'waiting', generation: 2 });
    expect(release(gate, releaseBy(1)).result.outcome).toBe('superseded');
  });

  test('a run whose action failed is failed, released all the same', () => {
    const failedRun: RunRecord = { ...run(1), actionType: 'enqueue', outcome: { state: 'failed', at: t3, code: 'Conflict', reason: 'no' } };
    expect(runStateOf(failedRun, released(created(), 1))).toMatchObject({ state: 'failed', generation: 1, proceededAt: t1 });
  });
});
