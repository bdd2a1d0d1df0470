/**
 * Schedules on any host, on real time: a one-off a few seconds out, trigger-now (also while
 * paused), validation that creates nothing, and the list by state a page at a time. (Shared helpers:
 * support/schedules.ts.)
 */
import { type E2eHost, ownHostTest, startE2eHost } from './support/harness';
import { api, body, indexRowExists, queueTexts, quietTimers, ran, until } from './support/schedules';
import { expectProblem } from './support/http';
import { unique } from './support/names';

describe('schedules on any host (no time travel needed)', () => {
  let host: E2eHost;
  let s: ReturnType<typeof api>;

  beforeAll(async () => {
    host = await startE2eHost({ env: quietTimers });
    s = api(host);
  });
  afterAll(async () => {
    await host.dispose();
  });

  // These three read the host's storage (the target queue, the index table).
  ownHostTest('a one-off a few seconds out fires once, not before its time, on real time', async () => {
    const id = unique('soon');
    const queue = unique('app-out');
    // Whole seconds, a few ahead: durable timers on Azurite have fired up to ~1 s early on the real
    // host (devhost/docs/real-host.md#timers), which the schedule must not pass on as an early fire.
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 6000).toISOString();
    body(await s.create({ id, at, target: { type: 'queueMessage', queue, message: 'soon' } }), 201);
    const after = await until(
      'the run and the end',
      () => s.get(id),
      (r) => r.body.state === 'completed',
    );
    const [run] = ran(after.body);
    expect(run).toMatchObject({ at, kind: 'scheduled', outcome: 'succeeded' });
    expect(Date.parse(run?.startedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(at));
    expect(await queueTexts(host, queue)).toEqual(['soon']);
  });

  ownHostTest('trigger now runs the target at once, also while paused', async () => {
    const id = unique('trigger');
    const queue = unique('app-out');
    const at = new Date(Date.now() + 7 * 86_400_000).toISOString();
    body(await s.create({ id, at, target: { type: 'queueMessage', queue, message: 'now' } }), 201);
    const t1 = body(await s.trigger(id), 202);
    const first = await until(
      'the triggered run',
      () => s.get(id),
      (r) => ran(r.body).some((x) => x.triggerId === t1.triggerId && x.outcome === 'succeeded'),
    );
    expect(ran(first.body)).toEqual([expect.objectContaining({ kind: 'trigger', triggerId: t1.triggerId, outcome: 'succeeded' })]);
    expect(await queueTexts(host, queue)).toEqual(['now']);

    body(await s.pause(id), 200);
    const t2 = body(await s.trigger(id), 202);
    await until(
      'the second triggered run',
      () => s.get(id),
      (r) => ran(r.body).some((x) => x.triggerId === t2.triggerId && x.outcome === 'succeeded'),
    );
    expect(await queueTexts(host, queue)).toEqual(['now', 'now']);
    // The one-off itself has not fired: it is still waiting (paused) for its time.
    expect(body(await s.get(id), 200)).toMatchObject({ state: 'paused', runCount: 2 });
    body(await s.cancel(id), 200);
    expectProblem(await s.trigger(id), 409, 'Conflict');
  });

  ownHostTest('bad cron, time or zone is a 400 problem and creates nothing: no index row, no orchestration', async () => {
    const target = { type: 'queueMessage', queue: 'app-never-used', message: 'x' };
    const cases: [string, Record<string, unknown>, string][] = [
      ['five-field cron', { cron: '0 * * * *' }, 'body.cron'],
      ['cron out of range', { cron: '61 * * * * *' }, 'body.cron'],
      ['cron that never fires', { cron: '0 0 0 30 2 *' }, 'body.cron'],
      ['unknown zone', { cron: '0 0 9 * * *', timeZone: 'Mars/Olympus' }, 'body.timeZone'],
      ['offset as zone', { cron: '0 0 9 * * *', timeZone: '+05:00' }, 'body.timeZone'],
      ['time without offset', { at: '2027-01-15T09:00:00' }, 'body.at'],
      ['not a time', { at: 'tomorrow' }, 'body.at'],
      ['both at and cron', { at: '2027-01-15T09:00:00Z', cron: '0 0 9 * * *' }, 'body.at'],
      ['neither', {}, 'body.at'],
      ['zone with at', { at: '2027-01-15T09:00:00Z', timeZone: 'UTC' }, 'body.timeZone'],
    ];
    for (const [name, timing, path] of cases) {
      const id = unique('bad');
      const problem = expectProblem(await s.create({ id, ...timing, target }), 400, 'ValidationFailed');
      expect({ name, paths: problem.issues?.map((i) => i.path) }).toEqual({ name, paths: expect.arrayContaining([path]) });
      expect({ name, row: await indexRowExists(host, id), instance: (await s.instance(id)).status }).toEqual({
        name,
        row: false,
        instance: 404,
      });
    }
    // Targets this deployment refuses are 400s too (and create nothing).
    const id = unique('bad');
    const refused = expectProblem(
      await s.create({ id, at: '2027-01-15T09:00:00Z', target: { type: 'webhook', url: 'https://127.0.0.1/hook' } }),
      400,
    );
    expect(refused.issues).toEqual([{ path: 'body.target.url', message: expect.stringMatching(/allow-list/) }]);
    expect(await indexRowExists(host, id)).toBe(false);
    const job = expectProblem(
      await s.create({ id, at: '2027-01-15T09:00:00Z', target: { type: 'job', processor: 'payroll', items: [{ id: 'a' }] } }),
      400,
    );
    expect(job.issues?.map((i) => i.path)).toEqual(['body.target.processor']);
    expect((await s.instance(id)).status).toBe(404);
  });

  test('lists schedules by state, a page at a time', async () => {
    const ids = Array.from({ length: 3 }, () => unique('listed'));
    const at = new Date(Date.now() + 30 * 86_400_000).toISOString();
    for (const id of ids) body(await s.create({ id, at, target: { type: 'queueMessage', queue: 'app-listed-out', message: id } }), 201);
    body(await s.pause(ids[1] as string), 200);
    const seen = new Map<string, string>();
    let token: string | undefined;
    let pages = 0;
    do {
      const query: string = `?state=paused&maxPageSize=2${token === undefined ? '' : `&continuationToken=${encodeURIComponent(token)}`}`;
      const page = body(await s.list(query), 200);
      expect(page.items.length).toBeLessThanOrEqual(2);
      for (const item of page.items) seen.set(item.id, item.state);
      token = page.continuationToken;
      pages++;
    } while (token !== undefined && pages < 100);
    expect(seen.get(ids[1] as string)).toBe('paused');
    expect(seen.has(ids[0] as string)).toBe(false);
    expect([...seen.values()].every((state) => state === 'paused')).toBe(true);
    expectProblem(await s.list('?state=sleeping'), 400, 'ValidationFailed');
    for (const id of ids) body(await s.cancel(id), 200);
  });
});
