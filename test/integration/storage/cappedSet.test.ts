/** The capped set on Azurite: the count holds under concurrent adds from several "instances". */
import fc from 'fast-check';

import { systemClock } from '../../../shared/clock';
import { AppError } from '../../../shared/errors';
import { silentLogger } from '../../../shared/log';
import { occBackoff } from '../../../shared/retry';
import { CappedSet, type CappedSetOptions } from '../../../shared/storage/cappedSet';
import { storageFor, uniqueTableName } from '../../support/sequences';

describe('capped set', () => {
  const storage = storageFor();
  const name = uniqueTableName('capped');
  // Each instance has its own per-process memory of members, like separate app instances.
  const options = (partitionKey: string, max: number): CappedSetOptions => ({
    table: () => storage.table(name),
    partitionKey,
    max,
    noun: 'stream types',
    setting: 'TALLYHO_STREAMS_MAX_TYPES',
    retry: {
      clock: systemClock,
      random: Math.random,
      policy: occBackoff({ maxAttempts: 100, maxWaitMs: 60_000 }),
      logger: silentLogger,
      subject: 'test count',
    },
  });
  const instance = (partitionKey: string, max: number): CappedSet => new CappedSet(options(partitionKey, max));

  async function members(partitionKey: string): Promise<string[]> {
    const table = await storage.table(name);
    const rows: string[] = [];
    for await (const row of table.listEntities({ queryOptions: { filter: `PartitionKey eq '${partitionKey}'` } }))
      rows.push(row.rowKey ?? '');
    return rows.filter((r) => r.startsWith('m|')).sort();
  }

  /** The set's count rows (the total's and each holder's) by RowKey, with their counts. */
  async function countRows(partitionKey: string): Promise<Map<string, number>> {
    const table = await storage.table(name);
    const rows = new Map<string, number>();
    for await (const row of table.listEntities<{ n: number }>({ queryOptions: { filter: `PartitionKey eq '${partitionKey}'` } }))
      if (!(row.rowKey ?? '').startsWith('m|')) rows.set(row.rowKey ?? '', row.n);
    return rows;
  }

  it('concurrent new names from several instances never pass the cap, and a refused name writes nothing', async () => {
    const instances = [instance('race', 5), instance('race', 5), instance('race', 5)];
    const names = Array.from({ length: 12 }, (_, i) => `type-${String(i).padStart(2, '0')}`);
    const outcomes = await Promise.allSettled(
      names.map(async (n, i) => {
        const via = instances[i % instances.length];
        if (via === undefined) throw new Error('no instance');
        await via.admit(n);
      }),
    );
    const admitted = names.filter((_, i) => outcomes[i]?.status === 'fulfilled');
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    expect(admitted).toHaveLength(5);
    expect(refused).toHaveLength(7);
    for (const err of refused) {
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'Conflict', status: 409, extra: { limit: 'TALLYHO_STREAMS_MAX_TYPES', max: 5 } });
    }
    expect(await members('race')).toEqual(admitted.map((n) => `m|${n}`).sort());
    expect(await instances[0]?.size()).toBe(5);
  });

  it('admits a known name again when full (from any instance), and counts it once', async () => {
    const a = instance('known', 2);
    const b = instance('known', 2);
    await a.admit('orders');
    await Promise.all([a.admit('refunds'), b.admit('refunds'), b.admit('orders')]);
    await expect(b.admit('orders')).resolves.toBeUndefined();
    await expect(instance('known', 2).admit('refunds')).resolves.toBeUndefined();
    await expect(a.admit('payments')).rejects.toMatchObject({ code: 'Conflict' });
    expect(await members('known')).toEqual(['m|orders', 'm|refunds']);
    expect(await a.size()).toBe(2);
  });

  it('admits a name another instance added between its membership read and its count read (CI run of stop 21)', async () => {
    const a = instance('interleaved', 2);
    await a.admit('orders');
    // b reads "refunds is not a member", then, before it reads the count, a adds refunds and fills
    // the set. b must see refunds as a member, not refuse it as one name too many.
    const real = await storage.table(name);
    let interleaved = false;
    const table = new Proxy(real, {
      get(target, key, receiver): unknown {
        if (key !== 'getEntity') return Reflect.get(target, key, receiver) as unknown;
        return async (partitionKey: string, rowKey: string, options?: object) => {
          if (rowKey === 'count' && !interleaved) {
            interleaved = true;
            await a.admit('refunds');
          }
          return target.getEntity(partitionKey, rowKey, options);
        };
      },
    });
    const b = new CappedSet({ ...options('interleaved', 2), table: () => Promise.resolve(table) });
    await expect(b.admit('refunds')).resolves.toBeUndefined();
    expect(interleaved).toBe(true);
    await expect(b.admit('payments')).rejects.toMatchObject({ code: 'Conflict' });
    expect(await members('interleaved')).toEqual(['m|orders', 'm|refunds']);
  });

  it('keeps sets in different partitions apart', async () => {
    await instance('hub-a', 1).admit('orders');
    await expect(instance('hub-a', 1).admit('refunds')).rejects.toMatchObject({ code: 'Conflict' });
    await expect(instance('hub-b', 1).admit('refunds')).resolves.toBeUndefined();
  });

  const shared = (partitionKey: string, max: number, share: number): CappedSet => new CappedSet({ ...options(partitionKey, max), share });

  it("one holder filling its share from several instances at once cannot refuse another holder's admission", async () => {
    const instances = [shared('shares', 8, 2), shared('shares', 8, 2), shared('shares', 8, 2)];
    const via = (i: number): CappedSet => instances[i % instances.length] as CappedSet;
    const flood = Array.from({ length: 20 }, (_, i) => via(i).admit(`a-${i}`, 'entra:a'));
    const honest = Array.from({ length: 2 }, (_, i) => via(i + 1).admit(`b-${i}`, 'entra:b'));
    const [floodOutcomes, honestOutcomes] = await Promise.all([Promise.allSettled(flood), Promise.allSettled(honest)]);
    expect(honestOutcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(floodOutcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
    for (const o of floodOutcomes)
      if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'TooManyRequests', status: 429, extra: { share: 2 } });
    expect((await members('shares')).filter((m) => m.startsWith('m|a-'))).toHaveLength(2);
    expect(await via(0).size()).toBe(4);
  });

  it('the count row of a holder that holds nothing is deleted, not left at 0 (the total stays: its ETag guards every change)', async () => {
    const set = shared('empty-rows', 4, 2);
    await Promise.all([set.admit('job-1', 'cred:a'), set.admit('job-2', 'cred:b')]);
    expect(await countRows('empty-rows')).toEqual(
      new Map([
        ['count', 2],
        ['h|cred%3Aa', 1],
        ['h|cred%3Ab', 1],
      ]),
    );
    await set.release('job-1');
    expect(await countRows('empty-rows')).toEqual(
      new Map([
        ['count', 1],
        ['h|cred%3Ab', 1],
      ]),
    );
    await set.release('job-2');
    expect(await countRows('empty-rows')).toEqual(new Map([['count', 0]]));
    // An absent row reads as 0: the next admission creates it again.
    await set.admit('job-3', 'cred:a');
    expect(await set.heldBy('cred:a')).toBe(1);
    expect(await set.size()).toBe(1);
  });

  it('a released place goes back to its holder: the holder may take another', async () => {
    const set = shared('give-back', 4, 1);
    await set.admit('job-1', 'cred:a');
    await expect(set.admit('job-2', 'cred:a')).rejects.toMatchObject({ code: 'TooManyRequests' });
    expect(await set.release('job-1')).toBe(true);
    expect(await set.release('job-1')).toBe(false);
    await expect(set.admit('job-2', 'cred:a')).resolves.toBeUndefined();
    expect(await set.size()).toBe(1);
  });

  it('a burst of 60 admissions on one instance is one writer of the count: none loses a race, so none runs out of attempts (a 503)', async () => {
    let lostRaces = 0;
    const base = options('burst', 10);
    const set = new CappedSet({
      ...base,
      share: 10,
      retry: { ...base.retry, policy: occBackoff({ maxAttempts: 12, maxWaitMs: 5000 }), onLostRace: () => lostRaces++ },
    });
    const outcomes = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => set.admit(`job-${i}`, i % 2 === 0 ? 'a' : 'b')));
    const codes = outcomes.map((o) => (o.status === 'fulfilled' ? 'admitted' : (o.reason as { code?: string }).code));
    expect(codes.filter((c) => c === 'admitted')).toHaveLength(10);
    expect(codes.filter((c) => c !== 'admitted' && c !== 'Conflict' && c !== 'TooManyRequests')).toEqual([]);
    // Racing each other's ETags is what ran a loaded machine out of attempts; batched, nobody races.
    expect(lostRaces).toBe(0);
    expect(await members('burst')).toHaveLength(10);
  });

  it('two holders interleaving admissions and releases from two instances at once: neither passes its share, the count matches the members', async () => {
    type Op = { readonly kind: 'admit' | 'release'; readonly who: 'a' | 'b'; readonly n: number; readonly via: 0 | 1 };
    const op = fc.record({
      kind: fc.constantFrom('admit' as const, 'release' as const),
      who: fc.constantFrom('a' as const, 'b' as const),
      n: fc.integer({ min: 0, max: 5 }),
      via: fc.constantFrom(0 as const, 1 as const),
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }), async (rounds: Op[][]) => {
        const partition = `prop-${run++}`;
        const instances = [shared(partition, 6, 3), shared(partition, 6, 3)];
        for (const round of rounds) {
          // Each round's operations go at once, through either instance.
          await Promise.allSettled(
            round.map((o) => {
              const via = instances[o.via] as CappedSet;
              return o.kind === 'admit' ? via.admit(`${o.who}-${o.n}`, o.who) : via.release(`${o.who}-${o.n}`);
            }),
          );
          const held = await members(partition);
          expect(held.filter((m) => m.startsWith('m|a-')).length).toBeLessThanOrEqual(3);
          expect(held.filter((m) => m.startsWith('m|b-')).length).toBeLessThanOrEqual(3);
          expect(await instances[0]?.size()).toBe(held.length);
          // Each holder's count row agrees with its members (a drift would refuse a holder under its share),
          // and a count at 0 is no row at all (deleted under its ETag, racing the other instance's admissions).
          const counts = await countRows(partition);
          for (const who of ['a', 'b']) {
            const n = held.filter((m) => m.startsWith(`m|${who}-`)).length;
            expect(counts.get(`h|${who}`)).toBe(n === 0 ? undefined : n);
          }
          expect(counts.get('count') ?? 0).toBe(held.length);
        }
      }),
      { numRuns: 12 },
    );
  });
});
