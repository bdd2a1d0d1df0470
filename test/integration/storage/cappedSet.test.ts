/** The capped set on Azurite: the count holds under concurrent adds from several "instances". */
import { systemClock } from '../../../shared/clock';
import { AppError } from '../../../shared/errors';
import { silentLogger } from '../../../shared/log';
import { occBackoff } from '../../../shared/retry';
import { CappedSet } from '../../../shared/storage/cappedSet';
import { storageFor, uniqueTableName } from '../../support/sequences';

describe('capped set', () => {
  const storage = storageFor();
  const name = uniqueTableName('capped');
  // Each instance has its own per-process memory of members, like separate app instances.
  const instance = (partitionKey: string, max: number): CappedSet =>
    new CappedSet({
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

  async function members(partitionKey: string): Promise<string[]> {
    const table = await storage.table(name);
    const rows: string[] = [];
    for await (const row of table.listEntities({ queryOptions: { filter: `PartitionKey eq '${partitionKey}'` } }))
      rows.push(row.rowKey ?? '');
    return rows.filter((r) => r.startsWith('m|')).sort();
  }

  it('finding 5: concurrent new names from several instances never pass the cap, and a refused name writes nothing', async () => {
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

  it('keeps sets in different partitions apart', async () => {
    await instance('hub-a', 1).admit('orders');
    await expect(instance('hub-a', 1).admit('refunds')).rejects.toMatchObject({ code: 'Conflict' });
    await expect(instance('hub-b', 1).admit('refunds')).resolves.toBeUndefined();
  });
});
