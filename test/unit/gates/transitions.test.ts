/** The gate's state machine: generations, exactly-once release, late joiners, resets. */
import type { GateRecord } from '../../../shared/gates/operations';
import { create, proceeded, register, release, reset } from '../../../shared/gates/transitions';

const t0 = '2026-01-01T00:00:00.000Z';
const t1 = '2026-01-01T00:01:00.000Z';
const t2 = '2026-01-01T00:02:00.000Z';

function created(releaseAt: string | null = null): GateRecord {
  const { record } = create(undefined, { name: 'g', at: t0, releaseAt });
  if (record === undefined) throw new Error('not created');
  return record;
}

function withWaiters(record: GateRecord, ...waiters: string[]): GateRecord {
  let r = record;
  for (const waiter of waiters) r = register(r, { waiter, maxWaiters: 100 }).record as GateRecord;
  return r;
}

const releaseBy = (generation?: number) => ({
  ...(generation === undefined ? {} : { generation }),
  at: t1,
  by: 'alice',
  how: 'api' as const,
});

describe('create', () => {
  test('makes a closed gate at generation 1 with the schedule', () => {
    const { record, result } = create(undefined, { name: 'g', at: t0, releaseAt: t2 });
    expect(result).toMatchObject({ created: true, gate: { name: 'g', generation: 1, state: 'closed', releaseAt: t2, release: null } });
    expect(record?.waiting).toEqual([]);
  });

  test('creating again changes nothing and reports the existing gate', () => {
    const existing = withWaiters(created(), 'a');
    const { record, result } = create(existing, { name: 'g', at: t2, releaseAt: t2 });
    expect(record).toBe(existing);
    expect(result).toMatchObject({ created: false, gate: { createdAt: t0, releaseAt: null, waiters: { waiting: 1 } } });
  });
});

describe('register', () => {
  test('a missing gate is reported and not created', () => {
    expect(register(undefined, { waiter: 'a', maxWaiters: 10 })).toEqual({ record: undefined, result: { outcome: 'missing' } });
  });

  test('a closed gate adds the run once; registering again is idempotent', () => {
    const once = register(created(), { waiter: 'a', maxWaiters: 10 });
    expect(once.result).toEqual({ outcome: 'waiting', generation: 1 });
    const twice = register(once.record, { waiter: 'a', maxWaiters: 10 });
    expect(twice.record).toBe(once.record);
    expect(twice.record?.waiting).toEqual(['a']);
    expect(twice.record?.counts.registered).toBe(1);
  });

  test('a full generation refuses more runs and changes nothing', () => {
    const full = withWaiters(created(), 'a', 'b');
    const refused = register(full, { waiter: 'c', maxWaiters: 2 });
    expect(refused.result).toEqual({ outcome: 'full', generation: 1, limit: 2 });
    expect(refused.record).toBe(full);
  });

  test('after the release a late joiner is told at once, with the release, and counted as late', () => {
    const released = release(withWaiters(created(), 'a'), releaseBy(1)).record;
    const late = register(released, { waiter: 'z', maxWaiters: 10 });
    expect(late.result).toEqual({ outcome: 'released', generation: 1, release: { generation: 1, at: t1, by: 'alice', how: 'api' } });
    expect(late.record?.waiting).toEqual([]);
    expect(late.record?.counts).toEqual({ registered: 1, late: 1, proceeded: 0 });
  });
});

describe('release', () => {
  test('releases the current generation once and hands over exactly the registered runs', () => {
    const gate = withWaiters(created(), 'a', 'b', 'c');
    const first = release(gate, releaseBy(1));
    expect(first.result).toMatchObject({ outcome: 'released', waiters: ['a', 'b', 'c'] });
    expect(first.record).toMatchObject({ state: 'released', waiting: [], release: { generation: 1, at: t1, by: 'alice', how: 'api' } });

    const second = release(first.record, { generation: 1, at: t2, by: 'bob', how: 'api' });
    expect(second.record).toBe(first.record);
    expect(second.result).toMatchObject({ outcome: 'alreadyReleased', gate: { release: { by: 'alice', at: t1 } } });
    expect(second.result).not.toHaveProperty('waiters');
  });

  test('without a generation it releases whatever is current', () => {
    expect(release(created(), releaseBy()).result.outcome).toBe('released');
  });

  test('a release of an older generation is superseded and changes nothing', () => {
    const gen2 = reset(release(created(), releaseBy(1)).record, { fromGeneration: 1, at: t2, releaseAt: null }).record;
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
});

describe('reset', () => {
  test('a released gate becomes closed with the next generation, nobody waiting, counts cleared', () => {
    const released = release(withWaiters(created(t2), 'a'), releaseBy(1)).record;
    const { record, result } = reset(released, { fromGeneration: 1, at: t2, releaseAt: null });
    expect(result).toMatchObject({
      outcome: 'reset',
      carried: 0,
      gate: { generation: 2, state: 'closed', release: null, releaseAt: null },
    });
    expect(record).toMatchObject({ generationStartedAt: t2, createdAt: t0, waiting: [], counts: { registered: 0, late: 0, proceeded: 0 } });
  });

  test('runs waiting on a closed gate are carried into the new generation', () => {
    const { record, result } = reset(withWaiters(created(), 'a', 'b'), { fromGeneration: 1, at: t2, releaseAt: t2 });
    expect(result).toMatchObject({ outcome: 'reset', carried: 2, gate: { generation: 2, releaseAt: t2 } });
    expect(record?.waiting).toEqual(['a', 'b']);
    expect(release(record, releaseBy(2)).result).toMatchObject({ outcome: 'released', waiters: ['a', 'b'] });
  });

  test('a second reset from the same generation changes nothing (concurrent resets make one generation)', () => {
    const once = reset(created(), { fromGeneration: 1, at: t1, releaseAt: null });
    const twice = reset(once.record, { fromGeneration: 1, at: t2, releaseAt: null });
    expect(twice.record).toBe(once.record);
    expect(twice.result).toMatchObject({ outcome: 'alreadyReset', gate: { generation: 2 } });
  });
});

describe('proceeded', () => {
  test('counts runs of the released current generation only', () => {
    const released = release(created(), releaseBy(1)).record;
    const counted = proceeded(released, { generation: 1, waiter: 'a' }).record;
    expect(counted?.counts.proceeded).toBe(1);
    expect(proceeded(counted, { generation: 0 + 2, waiter: 'b' }).record).toBe(counted);
    const closed = created();
    expect(proceeded(closed, { generation: 1, waiter: 'a' }).record).toBe(closed);
    expect(proceeded(undefined, { generation: 1, waiter: 'a' }).record).toBeUndefined();
  });
});
