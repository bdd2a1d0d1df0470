import type { ScheduleDefinition } from '../../../shared/schedules/definition';
import {
  begin,
  duePolls,
  initialState,
  markPolled,
  needsCheck,
  nextWake,
  type Plan,
  planControl,
  planRunResult,
  planTick,
  type ScheduleState,
} from '../../../shared/schedules/machine';
import type { ControlSnapshot, EngineSettings } from '../../../shared/schedules/records';

const settings: EngineSettings = { graceMs: 30_000, maxConcurrentRuns: 3, pollMs: 10_000, recheckMs: 3_600_000, runCheckMs: 1000 };
const t0 = new Date('2027-01-01T00:00:00Z');
const at = (seconds: number): Date => new Date(t0.getTime() + seconds * 1000);
const target = { type: 'queueMessage', queue: 'out', message: 'hi' } as const;

function cron(
  overlap: ScheduleDefinition['overlap'] = 'skip',
  catchUp: ScheduleDefinition['catchUp'] = { policy: 'once' },
): ScheduleDefinition {
  return { timing: { kind: 'cron', cron: '0 * * * * *', timeZone: 'UTC' }, target, overlap, catchUp };
}
const once = (seconds: number): ScheduleDefinition => ({
  timing: { kind: 'once', at: at(seconds).toISOString() },
  target,
  overlap: 'skip',
  catchUp: { policy: 'once' },
});
const snapshot = (
  state: ControlSnapshot['state'],
  triggers: ControlSnapshot['triggers'] = [],
  settled: ControlSnapshot['settled'] = [],
): ControlSnapshot => ({
  state,
  triggers,
  controlVersion: 1,
  settings,
  settled,
});

/** Follows plans the way the orchestrator does; `state` is always the latest. */
class Driver {
  state: ScheduleState;
  last!: Plan;
  constructor(definition: ScheduleDefinition) {
    // As the orchestration does on its first turn (at t0).
    this.state = begin(initialState('s1', definition, settings, t0), t0);
  }
  private take(plan: Plan): Plan {
    this.state = plan.state;
    this.last = plan;
    return plan;
  }
  tick(seconds: number): Plan {
    return this.take(planTick(this.state, at(seconds)));
  }
  control(seconds: number, s: ControlSnapshot): Plan {
    return this.take(planControl(this.state, s, at(seconds)));
  }
  end(seconds: number, runId: string, outcome: Parameters<typeof planRunResult>[2] = { outcome: 'succeeded' }): Plan {
    return this.take(planRunResult(this.state, runId, outcome, at(seconds)));
  }
}

const starts = (p: Plan): string[] => p.start.map((s) => `${s.runId} ${s.fire.kind} ${s.fire.at.slice(14, 19)}`);
const skips = (p: Plan): string[] => p.records.map((r) => `${r.outcome}:${r.reason ?? ''}${r.count === undefined ? '' : `x${r.count}`}`);

describe('schedule state machine', () => {
  it('one-off: waits for its time, fires once, then completes', () => {
    const d = new Driver(once(90));
    expect(d.tick(0)).toMatchObject({ start: [], nextFireAt: at(90).toISOString(), wakeAt: at(90).toISOString(), finished: undefined });
    expect(starts(d.tick(90))).toEqual(['s1#1 scheduled 01:30']);
    expect(d.last.finished).toBeUndefined(); // the run is still in progress
    expect(d.end(91, 's1#1')).toMatchObject({ start: [], finished: 'completed', nextFireAt: undefined });
  });

  it('one-off cancelled before its time never fires and finishes as cancelled', () => {
    const d = new Driver(once(90));
    d.tick(0);
    expect(d.control(30, snapshot('cancelled'))).toMatchObject({ start: [], finished: 'cancelled' });
    expect(d.tick(90).start).toEqual([]);
  });

  it('one-off created after its time fires at once', () => {
    const d = new Driver(once(-5));
    expect(starts(d.tick(0))).toEqual(['s1#1 scheduled 59:55']);
  });

  it('cron: fires each minute and tells the index the next fire', () => {
    const d = new Driver(cron());
    expect(d.tick(0).nextFireAt).toBe(at(60).toISOString());
    expect(starts(d.tick(60))).toEqual(['s1#1 scheduled 01:00']);
    expect(d.last.nextFireAt).toBe(at(120).toISOString());
    d.end(61, 's1#1');
    expect(starts(d.tick(120))).toEqual(['s1#2 scheduled 02:00']);
  });

  it('skip: a fire during a run is recorded as skipped and not run', () => {
    const d = new Driver(cron('skip'));
    d.tick(60);
    expect(d.tick(120)).toMatchObject({ start: [] });
    expect(skips(d.last)).toEqual(['skipped:overlap']);
    expect(d.end(130, 's1#1').start).toEqual([]);
  });

  it('bufferOne: holds one fire during a run, skips the next, and runs the held one when the run ends', () => {
    const d = new Driver(cron('bufferOne'));
    d.tick(60);
    expect(d.tick(120).start).toEqual([]);
    expect(skips(d.tick(180))).toEqual(['skipped:overlap']);
    expect(starts(d.end(200, 's1#1'))).toEqual(['s1#2 scheduled 02:00']);
  });

  it('allow: runs overlap up to the bound', () => {
    const d = new Driver(cron('allow'));
    d.tick(60);
    d.tick(120);
    d.tick(180);
    expect(d.state.running.map((r) => r.runId)).toEqual(['s1#1', 's1#2', 's1#3']);
    expect(skips(d.tick(240))).toEqual(['skipped:concurrencyLimit']);
  });

  it('pause stops fires (and drops a held one); resume continues with the next fire without catching up', () => {
    const d = new Driver(cron('bufferOne'));
    d.tick(60);
    d.tick(120); // held behind run 1
    expect(skips(d.control(130, snapshot('paused')))).toEqual(['skipped:paused']);
    expect(d.end(140, 's1#1').start).toEqual([]);
    expect(d.tick(300)).toMatchObject({ start: [], nextFireAt: undefined });
    const resumed = d.control(330, snapshot('active'));
    expect(resumed.start).toEqual([]);
    expect(skips(resumed)).toEqual(['skipped:pausedx3']); // 03:00, 04:00, 05:00
    expect(resumed.nextFireAt).toBe(at(360).toISOString());
  });

  it('a one-off paused past its time fires on resume (the catch-up policy decides)', () => {
    const d = new Driver(once(90));
    d.control(10, snapshot('paused'));
    expect(d.tick(90).start).toEqual([]);
    expect(starts(d.control(600, snapshot('active')))).toEqual(['s1#1 catchUp 01:30']);
  });

  it('trigger-now runs once per request, even when the snapshot repeats, and obeys the overlap policy', () => {
    const d = new Driver(cron('skip'));
    const trigger = { id: 'tr-1', requestedAt: at(10).toISOString() };
    expect(starts(d.control(10, snapshot('active', [trigger])))).toEqual(['s1#1 trigger 00:10']);
    expect(d.control(11, snapshot('active', [trigger])).start).toEqual([]);
    const second = { id: 'tr-2', requestedAt: at(12).toISOString() };
    expect(skips(d.control(12, snapshot('active', [trigger, second])))).toEqual(['skipped:overlap']);
  });

  it('a trigger runs while paused', () => {
    const d = new Driver(cron());
    d.control(5, snapshot('paused'));
    expect(starts(d.control(10, snapshot('paused', [{ id: 'tr', requestedAt: at(10).toISOString() }])))).toEqual(['s1#1 trigger 00:10']);
  });

  it('cancel lets the run in progress finish, then completes as cancelled', () => {
    const d = new Driver(cron());
    d.tick(60);
    expect(d.control(70, snapshot('cancelled')).finished).toBeUndefined();
    expect(d.end(80, 's1#1').finished).toBe('cancelled');
  });

  it('a refused claim (paused meanwhile) frees the slot and applies the snapshot', () => {
    const d = new Driver(cron());
    d.tick(60);
    const plan = d.end(60, 's1#1', { outcome: 'refused', snapshot: snapshot('paused') });
    expect(plan.state.mode).toBe('paused');
    expect(plan.state.running).toEqual([]);
  });

  it('catch-up after downtime: once runs one fire and records the missed ones', () => {
    const d = new Driver(cron('skip', { policy: 'once' }));
    const p = d.tick(600 + 45);
    expect(starts(p)).toEqual(['s1#1 catchUp 10:00']);
    expect(skips(p)).toEqual(['missed:catchUpx9']);
  });

  it('catch-up all runs the backlog one after another under skip', () => {
    const d = new Driver(cron('skip', { policy: 'all', limit: 3 }));
    const p = d.tick(600 + 45);
    expect(starts(p)).toEqual(['s1#1 catchUp 08:00']);
    expect(skips(p)).toEqual(['missed:catchUpx7']);
    expect(starts(d.end(646, 's1#1'))).toEqual(['s1#2 catchUp 09:00']);
    expect(starts(d.end(647, 's1#2'))).toEqual(['s1#3 catchUp 10:00']);
  });

  it('a run that completes later is polled until it ends, and counts as in progress meanwhile', () => {
    const d = new Driver(cron('skip'));
    d.tick(60);
    d.end(61, 's1#1', { outcome: 'started', handle: 'job-9' });
    expect(nextWake(d.state, at(61))).toBe(at(71).toISOString());
    expect(duePolls(d.state, at(70))).toEqual([]);
    expect(duePolls(d.state, at(71)).map((r) => r.handle)).toEqual(['job-9']);
    d.state = markPolled(d.state, ['s1#1'], at(71));
    expect(nextWake(d.state, at(71))).toBe(at(81).toISOString());
    d.end(72, 's1#1', { outcome: 'running' });
    expect(skips(d.tick(120))).toEqual(['skipped:overlap']);
    expect(d.end(125, 's1#1', { outcome: 'succeeded' }).state.running).toEqual([]);
  });

  it('follows runs that outlived their wait through the index: reads it every runCheckMs until they settle', () => {
    const d = new Driver(cron('bufferOne'));
    d.tick(60);
    expect(needsCheck(d.state, at(61))).toBe(true);
    expect(nextWake(d.state, at(61))).toBe(at(62).toISOString());
    d.tick(120); // held behind the run in progress
    // Not settled yet (not even claimed): keep waiting.
    expect(d.control(121, snapshot('active', [], [{ runId: 'other#9', outcome: 'succeeded' }])).start).toEqual([]);
    const settled = d.control(122, snapshot('active', [], [{ runId: 's1#1', outcome: 'succeeded' }]));
    expect(starts(settled)).toEqual(['s1#2 scheduled 02:00']);
    // A refused claim settles it too; a started job turns into polling.
    d.control(123, snapshot('active', [], [{ runId: 's1#2', outcome: 'started', handle: 'job-1' }]));
    expect(d.state.running).toEqual([expect.objectContaining({ runId: 's1#2', handle: 'job-1', pollAt: at(133).toISOString() })]);
    expect(needsCheck(d.state, at(124))).toBe(false);
  });

  it('never sleeps past the recheck interval', () => {
    const d = new Driver({ ...once(0), timing: { kind: 'once', at: '2027-03-01T00:00:00.000Z' } });
    expect(d.tick(0).wakeAt).toBe(at(3600).toISOString());
  });
});
