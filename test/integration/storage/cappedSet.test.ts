/** The capped set on Azurite: the count holds under concurrent adds from several "instances". */
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
});
