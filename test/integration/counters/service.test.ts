import { bucketMs, totalRowKey } from '../../../shared/counters/keys';
import { counterHarness } from '../../support/counters';
import { codeOf } from '../../support/appErrors';
import { testClock } from '../../support/clocks';

describe('counters on Azurite', () => {
  it('creates, confirms and reconfigures a counter; mode and partitions freeze once it has data', async () => {
    const { service } = counterHarness();
    expect((await service.configure('views', { partitions: 3 })).outcome).toBe('created');
    expect((await service.configure('views', { partitions: 3 })).outcome).toBe('unchanged');
    expect((await service.configure('views', { partitions: 2, mode: 'sharded' })).outcome).toBe('updated');
    expect((await service.configure('views', { partitions: 2, mode: 'sharded', safetyWindowSeconds: 5 })).outcome).toBe('updated');
    await service.increment('views', 1);
    expect(await codeOf(service.configure('views', { partitions: 4, mode: 'sharded', safetyWindowSeconds: 5 }))).toBe('Conflict');
    expect(await codeOf(service.configure('views', { partitions: 2, mode: 'hits', safetyWindowSeconds: 5 }))).toBe('Conflict');
    const changed = await service.configure('views', { partitions: 2, mode: 'sharded', safetyWindowSeconds: 9 });
    expect(changed.outcome).toBe('updated');
    expect(changed.counter.definition).toEqual({ mode: 'sharded', partitions: 2, safetyWindowSeconds: 9 });
    // The partitions of the first settings are still read.
    expect(changed.counter.readPartitions).toBe(3);
  });

  it('answers 404 for an unknown counter, or creates it with the defaults when auto-create is on', async () => {
    const strict = counterHarness();
    expect(await codeOf(strict.service.increment('nope', 1))).toBe('NotFound');
    expect(await codeOf(strict.service.read('nope'))).toBe('NotFound');
    expect(await strict.rows('data')).toEqual([]);
    const lenient = counterHarness({ settings: { autoCreate: true, defaultPartitions: 2 } });
    await lenient.service.increment('fresh', 5);
    expect((await lenient.service.read('fresh')).value).toBe(5);
    expect((await lenient.service.catalog.read('fresh'))?.definition.partitions).toBe(2);
  });

  it('counts hits at once, folds those older than the safety window, and clears the dirty index after the bucket', async () => {
    const clock = testClock();
    const h = counterHarness({ clock });
    await h.service.configure('tickets', { partitions: 4, safetyWindowSeconds: 10 });
    for (let i = 1; i <= 150; i++) await h.service.increment('tickets', i % 2 === 0 ? 2 : 1);
    await h.service.increment('tickets', -5);
    const before = await h.service.read('tickets');
    expect(before).toMatchObject({ value: 75 * 2 + 75 - 5, pendingHits: 151, watermark: null });

    await clock.advance(5_000);
    expect((await h.service.runRollup()).hitsFolded).toBe(0);
    await h.service.increment('tickets', 1);
    await clock.advance(6_000);
    const first = await h.service.runRollup();
    expect(first.hitsFolded).toBe(151);
    expect(first.transactions).toBeGreaterThanOrEqual(4);
    expect(await h.service.read('tickets')).toMatchObject({ value: 221, pendingHits: 1 });
    // The bucket has not ended a safety window ago: the partitions stay marked.
    expect((await h.rows('dirty')).length).toBeGreaterThan(0);

    await clock.advance(bucketMs + 10_000);
    const second = await h.service.runRollup();
    expect(second.hitsFolded).toBe(1);
    const after = await h.service.read('tickets');
    expect(after).toMatchObject({ value: 221, pendingHits: 0 });
    expect(after.watermark).toBe(new Date(clock.now() - 10_000).toISOString());
    expect(await h.rows('dirty')).toEqual([]);
    expect((await h.rows('data')).filter((r) => r.rowKey !== totalRowKey)).toEqual([]);
    // Nothing dirty, nothing to do: the next run touches no partition.
    expect((await h.service.runRollup()).partitions).toBe(0);
  });

  it('counts an Idempotency-Key once in both modes, and refuses the key with another amount', async () => {
    for (const mode of ['hits', 'sharded'] as const) {
      const h = counterHarness();
      await h.service.configure('votes', { mode, partitions: 4 });
      expect(await h.service.increment('votes', 3, 'vote-1')).toEqual({ name: 'votes', by: 3, replayed: false });
      expect(await h.service.increment('votes', 3, 'vote-1')).toEqual({ name: 'votes', by: 3, replayed: true });
      await h.service.increment('votes', 3, 'vote-2');
      expect(await codeOf(h.service.increment('votes', 4, 'vote-1'))).toBe('Conflict');
      expect((await h.service.read('votes', true)).value).toBe(6);
    }
  });

  it('sums sharded totals and retries lost races under contention', async () => {
    // Every increment its own read and conditional write, as keyed increments are: they contend.
    const h = counterHarness({ writesInFlight: 0 });
    await h.service.configure('likes', { mode: 'sharded', partitions: 2 });
    await Promise.all(Array.from({ length: 40 }, () => h.service.increment('likes', 2)));
    const value = await h.service.read('likes');
    expect(value).toMatchObject({ value: 80, pendingHits: 0, mode: 'sharded' });
    expect((await h.rows('data')).every((r) => r.rowKey === totalRowKey)).toBe(true);
  });

  it('group commit: increments arriving while a write is under way share one hit row, the sum of theirs', async () => {
    const h = counterHarness();
    await h.service.configure('batched', { partitions: 4 });
    // A lone increment is a write of its own.
    await h.service.increment('batched', 7);
    expect((await h.rows('data')).map((r) => r.b)).toEqual([7]);
    const amounts = Array.from({ length: 60 }, (_, i) => (i % 5 === 0 ? -2 : (i % 3) + 1));
    const answers = await Promise.all(amounts.map((by) => h.service.increment('batched', by)));
    expect(answers.map((a) => a.by)).toEqual(amounts);
    const sum = 7 + amounts.reduce((s, by) => s + by, 0);
    // Every answer came after its write: all of it is stored, in far fewer rows than increments.
    const hits = (await h.rows('data')).filter((r) => r.rowKey !== totalRowKey);
    expect(hits.length).toBeLessThan(20);
    expect(hits.reduce((s, r) => s + Number(r.b), 0)).toBe(sum);
    expect(await h.service.read('batched', true)).toMatchObject({ value: sum, pendingHits: hits.length });
  });

  it('group commit, sharded: concurrent increments cost fewer shard writes; a shard written elsewhere meanwhile is re-read', async () => {
    const tables = counterHarness().tables;
    const a = counterHarness({ tables });
    const b = counterHarness({ tables });
    await a.service.configure('shared', { mode: 'sharded', partitions: 1 });
    await Promise.all(Array.from({ length: 40 }, () => a.service.increment('shared', 1)));
    const versions = async (): Promise<number> => (await a.rows('data')).reduce((s, r) => s + Number(r.v), 0);
    expect(await versions()).toBeLessThan(10);
    // `a` remembers the shard as it wrote it; `b` writes it since; `a` must not write on its stale copy.
    await b.service.increment('shared', 100);
    await a.service.increment('shared', 1);
    await Promise.all(Array.from({ length: 10 }, () => b.service.increment('shared', 1000)));
    await a.service.increment('shared', 1);
    expect((await a.service.read('shared')).value).toBe(40 + 100 + 1 + 10_000 + 1);
  });

  it('never loses a hit written by a clock behind the watermark: the consistent read counts it, the next rollup folds it', async () => {
    const clock = testClock();
    const tables = counterHarness().tables;
    const h = counterHarness({ clock, tables });
    await h.service.configure('skew', { partitions: 1, safetyWindowSeconds: 1 });
    await h.service.increment('skew', 10);
    await clock.advance(5_000);
    await h.service.increment('skew', 20);
    await clock.advance(5_000);
    await h.service.runRollup();
    expect(await h.service.read('skew')).toMatchObject({ value: 30, pendingHits: 0 });

    // An instance whose clock is 8 s behind writes a hit stamped below the watermark.
    const behind = testClock(clock.now() - 8_000);
    const late = counterHarness({ clock: behind, tables });
    await late.service.increment('skew', 7);
    expect((await h.service.read('skew')).value).toBe(30);
    expect(await h.service.read('skew', true)).toMatchObject({ value: 37, pendingHits: 1, consistent: true });
    await h.service.runRollup();
    expect(await h.service.read('skew')).toMatchObject({ value: 37, pendingHits: 0 });
  });

  it('deletes expired idempotency markers when the rollup visits the partition after the TTL', async () => {
    const clock = testClock();
    const h = counterHarness({ clock, idempotencyTtlSeconds: 60 });
    await h.service.configure('keyed', { partitions: 1, safetyWindowSeconds: 0 });
    await h.service.increment('keyed', 1, 'k1');
    await h.service.increment('keyed', 1, 'k2');
    await clock.advance(1);
    await h.service.runRollup();
    const markers = async () => (await h.rows('data')).filter((r) => String(r.rowKey).startsWith('~~')).length;
    expect(await markers()).toBe(2);
    await clock.advance(61_000);
    await h.service.increment('keyed', 1, 'k3');
    await clock.advance(1);
    const report = await h.service.runRollup();
    expect(report.markersSwept).toBe(2);
    expect(await markers()).toBe(1);
    expect((await h.service.read('keyed')).value).toBe(3);
    // Past the TTL the key counts anew (its marker is gone).
    expect((await h.service.increment('keyed', 1, 'k1')).replayed).toBe(false);
  });

  it('a rollup visits only the active counter: 50 idle counters with folded history cost it no partition and no request', async () => {
    const clock = testClock();
    let requests = 0;
    const h = counterHarness({ clock, writesInFlight: 0, storage: { observe: () => void requests++ } });
    const definition = { partitions: 2, safetyWindowSeconds: 10 };
    const settle = async (): Promise<void> => {
      await clock.advance(bucketMs + 11_000);
      await h.service.runRollup();
      expect(await h.rows('dirty')).toEqual([]);
    };
    // One active round: 60 hits over 2 partitions (both marked dirty), then the rollup that folds them.
    const activeRound = async (name: string): Promise<{ partitions: number; hitsFolded: number; requests: number }> => {
      await h.service.configure(name, definition);
      for (let i = 0; i < 60; i++) await h.service.increment(name, 1);
      await clock.advance(11_000);
      requests = 0;
      const report = await h.service.runRollup();
      return { partitions: report.partitions, hitsFolded: report.hitsFolded, requests };
    };

    const alone = await activeRound('active-before');
    await settle();
    for (let c = 0; c < 50; c++) {
      await h.service.configure(`idle-${c}`, definition);
      for (let i = 0; i < 3; i++) await h.service.increment(`idle-${c}`, 1);
    }
    await clock.advance(11_000);
    expect((await h.service.runRollup()).hitsFolded).toBe(150);
    await settle();
    expect((await h.service.read('idle-7', true)).value).toBe(3);

    const amongIdle = await activeRound('active-after');
    expect(alone).toMatchObject({ partitions: 2, hitsFolded: 60 });
    expect(amongIdle).toMatchObject({ partitions: 2, hitsFolded: 60 });
    // The same work costs the same requests whether or not 50 idle counters exist.
    expect(amongIdle.requests).toBeGreaterThan(0);
    expect(amongIdle.requests).toBe(alone.requests);
  });
});
