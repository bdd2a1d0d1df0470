/**
 * Security finding 5 ("unbounded resource creation"): what a function-level caller can make the app
 * create is capped, and a request past a cap is refused with nothing written. Each capability runs
 * on Azurite through its service, as the function-level route calls it.
 */
import { codeOf, appErrorOf } from '../support/appErrors';
import { transactions } from '../support/billing';
import { counterHarness } from '../support/counters';
import { jobHarness } from '../support/jobs';
import { scheduleHarness } from '../support/schedules';
import { sequenceHarness } from '../support/sequences';
import { creatorOf } from '../../shared/schedules/creator';

const keysOf = (rows: readonly Record<string, unknown>[]): string[] =>
  rows.map((r) => `${String(r.partitionKey)}/${String(r.rowKey)}`).sort();

describe('caps on what function-level callers create', () => {
  it('a counter auto-created beyond TALLYHO_COUNTERS_MAX_AUTO_CREATED is refused and creates nothing', async () => {
    const h = counterHarness({ settings: { autoCreate: true, maxAutoCreated: 2 } });
    await h.service.increment('first', 1);
    await h.service.increment('second', 1);
    const settingsBefore = keysOf(await h.rows('settings'));
    const dataBefore = keysOf(await h.rows('data'));
    expect(await appErrorOf(h.service.increment('third', 1))).toMatchObject({ code: 'Conflict', status: 409 });
    expect(keysOf(await h.rows('settings'))).toEqual(settingsBefore);
    expect(keysOf(await h.rows('data'))).toEqual(dataBefore);
    expect(await codeOf(h.service.read('third'))).toBe('NotFound');
    // Known counters keep working, and an admin-configured counter needs no place.
    await h.service.increment('first', 2);
    expect((await h.service.configure('admin-made', {})).outcome).toBe('created');
    await h.service.increment('admin-made', 1);
  });

  it("one caller auto-creates at most a quarter of the counters and of the sequences (429), and never takes another caller's place", async () => {
    const counters = counterHarness({ settings: { autoCreate: true, maxAutoCreated: 8 } });
    const sequences = sequenceHarness().service({ autoCreate: true, maxAutoCreated: 8 });
    const [floodC, floodS, honestC, honestS] = await Promise.all([
      Promise.allSettled(Array.from({ length: 8 }, (_, i) => counters.service.increment(`a-${i}`, 1, undefined, 'cred:a'))),
      Promise.allSettled(Array.from({ length: 8 }, (_, i) => sequences.next(`a-${i}`, 1, undefined, 'cred:a'))),
      Promise.allSettled(Array.from({ length: 2 }, (_, i) => counters.service.increment(`b-${i}`, 1, undefined, 'cred:b'))),
      Promise.allSettled(Array.from({ length: 2 }, (_, i) => sequences.next(`b-${i}`, 1, undefined, 'cred:b'))),
    ]);
    for (const honest of [honestC, honestS]) expect(honest.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled']);
    for (const flood of [floodC, floodS]) {
      expect(flood.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
      for (const o of flood)
        if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'TooManyRequests', status: 429, extra: { share: 2 } });
    }
    // A counter it made already takes no new place.
    const made = floodC.flatMap((o, i) => (o.status === 'fulfilled' ? [`a-${i}`] : []));
    await expect(counters.service.increment(made[0] as string, 1, undefined, 'cred:a')).resolves.toMatchObject({ by: 1 });
  });

  it("the same Idempotency-Key from two callers names two requests: neither replays (reads) nor swallows the other's", async () => {
    const counters = counterHarness({ settings: { autoCreate: true, maxAutoCreated: 8 } });
    await counters.service.increment('shared', 5, 'order-1', 'cred:a');
    // B's increment with A's key counts (it used to be taken for A's replay, and lost); each one's own retry does not.
    expect(await counters.service.increment('shared', 7, 'order-1', 'cred:b')).toMatchObject({ replayed: false });
    expect(await counters.service.increment('shared', 5, 'order-1', 'cred:a')).toMatchObject({ replayed: true });
    expect(await counters.service.increment('shared', 7, 'order-1', 'cred:b')).toMatchObject({ replayed: true });
    expect((await counters.service.read('shared', true)).value).toBe(12);
    const sequences = sequenceHarness().service({ autoCreate: true, maxAutoCreated: 8 });
    const a = await sequences.next('orders', 2, 'batch-1', 'cred:a');
    const b = await sequences.next('orders', 2, 'batch-1', 'cred:b');
    // B never gets A's numbers back as a replay; A's retry does.
    expect(b.numbers.filter((n) => a.numbers.includes(n))).toEqual([]);
    expect((await sequences.next('orders', 2, 'batch-1', 'cred:a')).numbers).toEqual(a.numbers);
  });

  it('a sequence auto-created beyond TALLYHO_SEQUENCES_MAX_AUTO_CREATED is refused and creates nothing', async () => {
    const h = sequenceHarness();
    const service = h.service({ autoCreate: true, maxAutoCreated: 1 });
    expect((await service.next('orders', 1)).numbers).toHaveLength(1);
    const before = keysOf(await h.entities());
    expect(await appErrorOf(service.next('refunds', 1))).toMatchObject({ code: 'Conflict', status: 409 });
    expect(keysOf(await h.entities())).toEqual(before);
    expect(await h.store.read('refunds')).toBeUndefined();
    // Another instance (its own process memory) refuses too: the count is in storage.
    expect(await codeOf(h.service({ autoCreate: true, maxAutoCreated: 1 }).next('refunds', 1))).toBe('Conflict');
    expect((await service.next('orders', 1)).numbers).toHaveLength(1);
  });

  it('a function-level schedule beyond TALLYHO_SCHEDULES_MAX_LIVE is refused and creates nothing; admin creates are not capped', async () => {
    const h = scheduleHarness({ env: { TALLYHO_SCHEDULES_MAX_LIVE: '2' } });
    const create = (id: string, level: 'function' | 'admin') =>
      h.service.create(
        { id, at: '2027-06-01T00:00:00Z', target: { type: 'queueMessage', queue: 'app-out', message: 'hi' } },
        // One owner per schedule: the cap is what is tested here, the owners' shares of it below.
        creatorOf('t', level, `cred:${id}`),
      );
    await create('one', 'function');
    await create('two', 'function');
    const started = h.engine.started.size;
    expect(await appErrorOf(create('three', 'function'))).toMatchObject({ code: 'Conflict', status: 409 });
    expect(await h.table.read('three')).toBeUndefined();
    expect(h.engine.started.size).toBe(started);
    // The same id again is a repeat, not a new schedule.
    expect((await create('two', 'function')).created).toBe(false);
    expect((await create('admin-made', 'admin')).created).toBe(true);
    // Once a schedule ends, a function-level create fits again.
    await h.service.cancel('one');
    await h.service.cancel('admin-made');
    expect((await create('three', 'function')).created).toBe(true);
  });

  it('concurrent function-level schedule creates never pass TALLYHO_SCHEDULES_MAX_LIVE together', async () => {
    const h = scheduleHarness({ env: { TALLYHO_SCHEDULES_MAX_LIVE: '3' } });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        h.service.create(
          { id: `race-${i}`, at: '2027-06-01T00:00:00Z', target: { type: 'queueMessage', queue: 'app-out', message: 'hi' } },
          creatorOf('t', 'function', `cred:${i}`),
        ),
      ),
    );
    const live = (await h.service.list(undefined, { maxPageSize: 50 })).items.filter((s) => s.state !== 'cancelled');
    expect(live.length).toBeLessThanOrEqual(3);
    // Losers of a race back off and count again, so places are not all lost to the race.
    expect(live.length).toBeGreaterThanOrEqual(1);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(live.length);
    for (const o of outcomes)
      if (o.status === 'rejected') expect(['Conflict', 'ConcurrencyExhausted']).toContain((o.reason as { code?: string }).code);
  });

  it("one owner's concurrent creates take at most its share of TALLYHO_SCHEDULES_MAX_LIVE (429), and never another owner's place", async () => {
    const h = scheduleHarness({ env: { TALLYHO_SCHEDULES_MAX_LIVE: '8' } });
    const create = (id: string, owner: string) =>
      h.service.create(
        { id, at: '2027-06-01T00:00:00Z', target: { type: 'queueMessage', queue: 'app-out', message: 'hi' } },
        creatorOf('t', 'function', owner),
      );
    const [flood, honest] = await Promise.all([
      Promise.allSettled(Array.from({ length: 8 }, (_, i) => create(`a-${i}`, 'cred:a'))),
      Promise.allSettled(Array.from({ length: 2 }, (_, i) => create(`b-${i}`, 'cred:b'))),
    ]);
    expect(honest.map((o) => (o.status === 'fulfilled' ? 'fulfilled' : String(o.reason)))).toEqual(['fulfilled', 'fulfilled']);
    // A quarter of 8; a loser of a race backs off and counts again, so it ends refused for the share, not lost.
    expect(flood.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
    for (const o of flood)
      if (o.status === 'rejected')
        expect(o.reason).toMatchObject({ code: 'TooManyRequests', status: 429, extra: { limit: 'TALLYHO_SCHEDULES_MAX_LIVE', share: 2 } });
    expect(await h.table.read('a-7').then((r) => r?.id ?? 'none')).toBe(flood[7]?.status === 'fulfilled' ? 'a-7' : 'none');
    // A schedule that ends gives its owner's place back.
    const mine = flood.flatMap((o, i) => (o.status === 'fulfilled' ? [`a-${i}`] : []));
    await h.service.cancel(mine[0] as string);
    expect((await create('a-again', 'cred:a')).created).toBe(true);
  });

  it('a job beyond TALLYHO_JOBS_MAX_OPEN is refused (429) from the HTTP path and stores nothing', async () => {
    const h = jobHarness({ settings: { maxOpen: 1 } });
    await h.jobs.submissions.submit({ processor: 'billing', items: transactions(3, 1) }, undefined, { owner: 'submitter' });
    const rows = keysOf(await h.rows('jobs'));
    const blobs = await h.blobs();
    expect(
      await appErrorOf(h.jobs.submissions.submit({ processor: 'billing', items: transactions(3, 2) }, undefined, { owner: 'submitter' })),
    ).toMatchObject({
      code: 'TooManyRequests',
      status: 429,
    });
    expect(keysOf(await h.rows('jobs'))).toEqual(rows);
    expect(await h.blobs()).toEqual(blobs);
    // Once the open job has finished, there is room again.
    await h.drain();
    await h.jobs.submissions.submit({ processor: 'billing', items: transactions(3, 3) }, undefined, { owner: 'submitter' });
  });
});
