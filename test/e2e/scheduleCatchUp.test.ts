/**
 * Catch-up after the host was down: the host stops and comes back on its persisted state with its
 * virtual clock later, and each catch-up policy deals with the fires it missed. (Shared helpers:
 * support/schedules.ts.)
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import { describeDevhost, type E2eHost, startE2eHost } from './support/harness';
import { api, body, queueTexts, quietTimers, ran, type Run, type Schedule, until } from './support/schedules';
import { unique } from './support/names';

describeDevhost('catch-up after the host was down', () => {
  let host: E2eHost;
  let s: ReturnType<typeof api>;

  beforeAll(async () => {
    // One second of grace: a fire more than a second old when the schedule gets to it is missed.
    // Crons every 2 s make catch-up quick to see; the floor for function-level crons would refuse them.
    host = await startE2eHost({
      virtualClock: true,
      env: { ...quietTimers, TALLYHO_SCHEDULES_MISFIRE_GRACE_SECONDS: '1', TALLYHO_SCHEDULES_MIN_CRON_INTERVAL_SECONDS: '1' },
    });
    s = api(host);
  });
  afterAll(async () => {
    await host.dispose();
  });

  test('restarted on its persisted state, each policy deals with the missed fires', async () => {
    // The host comes back with its virtual clock 12 s past the real time (restart's clockStartsAt;
    // the clock would otherwise start at the real time), as if it had been down for those seconds
    // (and the time the test took so far) while three recurrences (every 2 s) and two one-offs came due.
    const queue = (p: string) => `app-${p}-${randomBytes(4).toString('hex')}`;
    const now = await s.now();
    const at = new Date(now + 4000).toISOString();
    const cases = {
      none: { id: unique('cu-none'), queue: queue('cu-none'), catchUp: 'none' },
      once: { id: unique('cu-once'), queue: queue('cu-once'), catchUp: 'once' },
      all: { id: unique('cu-all'), queue: queue('cu-all'), catchUp: { policy: 'all', limit: 3 } },
      onceNone: { id: unique('cu-1none'), queue: queue('cu-1none'), catchUp: 'none' },
      onceOnce: { id: unique('cu-1once'), queue: queue('cu-1once'), catchUp: 'once' },
    };
    for (const key of ['none', 'once', 'all'] as const) {
      const c = cases[key];
      body(
        await s.create({
          id: c.id,
          cron: '*/2 * * * * *',
          catchUp: c.catchUp,
          target: { type: 'queueMessage', queue: c.queue, message: key },
        }),
        201,
      );
    }
    for (const key of ['onceNone', 'onceOnce'] as const) {
      const c = cases[key];
      body(await s.create({ id: c.id, at, catchUp: c.catchUp, target: { type: 'queueMessage', queue: c.queue, message: key } }), 201);
    }
    for (const c of Object.values(cases))
      await until(
        'started',
        () => s.get(c.id),
        (r) => r.body.nextFireAt !== null && r.body.state === 'active',
      );
    await host.restart({ clockStartsAt: Date.now() + 12_000 });

    // The recurrences: the timer that came due while down wakes each once; nothing moves the clock after.
    // Caught up: the misses are recorded, nothing runs, and nothing changes for a while.
    const settled = async (id: string): Promise<Schedule> => {
      let previous = '';
      const done = await until(
        `${id} caught up`,
        async () => (await sleep(500), (await s.get(id)).body),
        (x) => {
          const text = JSON.stringify(x.runs);
          const stable = text === previous;
          previous = text;
          return stable && x.runs.some((r) => r.outcome === 'missed') && !x.runs.some((r) => r.outcome === 'running');
        },
      );
      return done;
    };
    const none = await settled(cases.none.id);
    const once = await settled(cases.once.id);
    const all = await settled(cases.all.id);
    const missed = (x: Schedule) => x.runs.find((r) => r.outcome === 'missed')?.count ?? 0;
    // none: missed fires do not run (only a fire under a second old would).
    expect(ran(none).every((r) => r.kind === 'scheduled')).toBe(true);
    expect(ran(none).length).toBeLessThanOrEqual(1);
    expect(missed(none)).toBeGreaterThanOrEqual(4);
    // once: one run for the whole backlog, the newest fire.
    expect(ran(once)).toHaveLength(1);
    expect(missed(once)).toBeGreaterThanOrEqual(4);
    // all (limit 3): the three newest fires, oldest first; the older ones are missed.
    const allRuns = ran(all);
    expect(allRuns).toHaveLength(3);
    expect(allRuns.map((r) => Date.parse(r.at))).toEqual([...allRuns.map((r) => Date.parse(r.at))].sort((a, b) => a - b));
    expect(Date.parse((allRuns[1] as Run).at) - Date.parse((allRuns[0] as Run).at)).toBe(2000);
    expect(missed(all)).toBeGreaterThanOrEqual(2);
    expect(await queueTexts(host, cases.all.queue)).toEqual(['all', 'all', 'all']);
    expect(await queueTexts(host, cases.once.queue)).toEqual(['once']);

    // The one-offs, late by several seconds: `none` misses it, `once` runs it (as a catch-up).
    const oneOffNone = await until(
      'one-off none',
      () => s.get(cases.onceNone.id),
      (r) => r.body.state === 'completed',
    );
    expect(ran(oneOffNone.body)).toEqual([]);
    expect(oneOffNone.body.runs).toEqual([expect.objectContaining({ outcome: 'missed', count: 1 })]);
    const oneOffOnce = await until(
      'one-off once',
      () => s.get(cases.onceOnce.id),
      (r) => r.body.state === 'completed',
    );
    expect(ran(oneOffOnce.body)).toEqual([expect.objectContaining({ at, kind: 'catchUp', outcome: 'succeeded' })]);
    expect(await queueTexts(host, cases.onceNone.queue)).toEqual([]);
    expect(await queueTexts(host, cases.onceOnce.queue)).toEqual(['onceOnce']);
    for (const key of ['none', 'once', 'all'] as const) body(await s.cancel(cases[key].id), 200);
  });
});
