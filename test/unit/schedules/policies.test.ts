import type { CatchUpPolicy } from '../../../shared/schedules/definition';
import { admitFires, type Fire, nextQueued, selectDueFires } from '../../../shared/schedules/policies';
import type { Timing } from '../../../shared/schedules/timing';

const everyMinute: Timing = { kind: 'cron', cron: '0 * * * * *', timeZone: 'UTC' };
const t0 = new Date('2027-01-01T00:00:00Z');
const minutes = (n: number): Date => new Date(t0.getTime() + n * 60_000);
const grace = 30_000;

function select(policy: CatchUpPolicy, now: Date) {
  const d = selectDueFires(everyMinute, policy, t0, now, grace);
  return { run: d.run.map((f) => `${f.at.slice(11, 16)} ${f.kind}`), missed: d.missed, cursor: d.cursor.toISOString() };
}

describe('catch-up policy', () => {
  it('runs an on-time fire under every policy and counts nothing missed', () => {
    const now = new Date(minutes(1).getTime() + 500);
    for (const policy of [{ policy: 'none' }, { policy: 'once' }, { policy: 'all', limit: 5 }] as const) {
      expect(select(policy, now)).toEqual({ run: ['00:01 scheduled'], missed: 0, cursor: minutes(1).toISOString() });
    }
  });

  it('none: after ten minutes down, runs only the on-time fire and records nine missed', () => {
    expect(select({ policy: 'none' }, new Date(minutes(10).getTime() + 1000))).toEqual({
      run: ['00:10 scheduled'],
      missed: 9,
      cursor: minutes(10).toISOString(),
    });
    // Woken past the grace period: even the newest fire is missed.
    expect(select({ policy: 'none' }, new Date(minutes(10).getTime() + 45_000))).toMatchObject({ run: [], missed: 10 });
  });

  it('once: runs one fire (the newest) for the whole backlog', () => {
    expect(select({ policy: 'once' }, new Date(minutes(10).getTime() + 45_000))).toEqual({
      run: ['00:10 catchUp'],
      missed: 9,
      cursor: minutes(10).toISOString(),
    });
  });

  it('all: runs the newest `limit` fires oldest first and misses the older ones', () => {
    expect(select({ policy: 'all', limit: 3 }, new Date(minutes(10).getTime() + 1000))).toEqual({
      run: ['00:08 catchUp', '00:09 catchUp', '00:10 scheduled'],
      missed: 7,
      cursor: minutes(10).toISOString(),
    });
  });

  it('leaves the cursor alone when nothing is due', () => {
    expect(select({ policy: 'all', limit: 3 }, new Date(t0.getTime() + 59_000))).toEqual({ run: [], missed: 0, cursor: t0.toISOString() });
  });

  it('a one-off missed by more than the grace period runs under once and all, not under none', () => {
    const once: Timing = { kind: 'once', at: minutes(1).toISOString() };
    const late = minutes(60);
    expect(selectDueFires(once, { policy: 'none' }, new Date(0), late, grace)).toMatchObject({ run: [], missed: 1 });
    expect(selectDueFires(once, { policy: 'once' }, new Date(0), late, grace).run).toEqual([
      { at: minutes(1).toISOString(), kind: 'catchUp' },
    ]);
    expect(selectDueFires(once, { policy: 'all', limit: 10 }, new Date(0), late, grace).missed).toBe(0);
  });
});

const fire = (at: string, kind: Fire['kind'] = 'scheduled'): Fire => ({ at, kind });

describe('overlap policy', () => {
  const idle = { running: 0, queued: [] };
  const busy = { running: 1, queued: [] };

  it('starts a fire when nothing is in progress, whatever the policy', () => {
    for (const policy of ['skip', 'bufferOne', 'allow'] as const) {
      expect(admitFires(policy, idle, [fire('a')], 10)).toEqual([{ action: 'start', fire: fire('a') }]);
    }
  });

  it('skip: a fire during a run is skipped', () => {
    expect(admitFires('skip', busy, [fire('a')], 10)).toEqual([{ action: 'skip', fire: fire('a'), reason: 'overlap' }]);
  });

  it('bufferOne: the first fire during a run waits, later ones are skipped while it waits', () => {
    expect(admitFires('bufferOne', busy, [fire('a')], 10)).toEqual([{ action: 'queue', fire: fire('a') }]);
    expect(admitFires('bufferOne', { running: 1, queued: [fire('a')] }, [fire('b')], 10)).toEqual([
      { action: 'skip', fire: fire('b'), reason: 'overlap' },
    ]);
    expect(nextQueued('bufferOne', { running: 1, queued: [fire('a')] })).toBeUndefined();
    expect(nextQueued('bufferOne', { running: 0, queued: [fire('a')] })).toEqual(fire('a'));
  });

  it('allow: fires run alongside up to the concurrency bound, then are skipped', () => {
    expect(admitFires('allow', { running: 1, queued: [] }, [fire('a'), fire('b')], 2)).toEqual([
      { action: 'start', fire: fire('a') },
      { action: 'skip', fire: fire('b'), reason: 'concurrencyLimit' },
    ]);
    expect(nextQueued('allow', { running: 0, queued: [fire('x')] })).toBeUndefined();
  });

  it('fires of one catch-up batch queue behind each other instead of skipping each other', () => {
    const batch = [fire('a', 'catchUp'), fire('b', 'catchUp'), fire('c')];
    for (const policy of ['skip', 'bufferOne'] as const) {
      expect(admitFires(policy, idle, batch, 10).map((a) => a.action)).toEqual(['start', 'queue', 'queue']);
    }
    // A backlog being drained does not stop bufferOne from holding one on-time fire.
    const draining = { running: 1, queued: [{ ...fire('b', 'catchUp'), backlog: true }] };
    expect(admitFires('bufferOne', draining, [fire('d')], 10)[0]?.action).toBe('queue');
    expect(admitFires('skip', draining, [fire('d')], 10)[0]?.action).toBe('skip');
  });
});
