/**
 * Operator listings on Azurite: a table scan that lists what it can read, names what it cannot
 * (instead of failing the whole list) and says when it stopped at the limit.
 */
import type { TableClient } from '@azure/data-tables';

import { systemClock } from '../../../shared/clock';
import { CounterCatalog } from '../../../shared/counters/catalog';
import { defaultDefinition } from '../../../shared/sequences/definition';
import { SequenceStore } from '../../../shared/sequences/store';
import { listRows } from '../../../shared/storage/list';
import { storageFor, uniqueTableName } from '../../support/sequences';

describe('operator listings', () => {
  const storage = storageFor();
  const table = (prefix: string): (() => Promise<TableClient>) => {
    const name = uniqueTableName(prefix);
    return () => storage.table(name);
  };

  test('sequences: readable ones in name order, a corrupt row named under unreadable, truncation at the limit', async () => {
    const sequences = table('lseq');
    const store = new SequenceStore(sequences);
    for (const name of ['beta', 'alpha', 'gamma']) await store.create(name, defaultDefinition);
    await (await sequences()).createEntity({ partitionKey: 'broken', rowKey: 'sequence', next: 'not a number' });

    const all = await store.list(10);
    expect(all.items.map((s) => s.name)).toEqual(['alpha', 'beta', 'gamma']);
    expect(all.items[0]?.next).toBe(defaultDefinition.start);
    expect(all.unreadable).toEqual([{ name: 'broken', detail: expect.stringMatching(/corrupt/) }]);
    expect(all.truncated).toBe(false);

    const two = await store.list(2);
    expect(two.items.map((s) => s.name)).toEqual(['alpha', 'beta']);
    expect(two.truncated).toBe(true);
    const exact = await store.list(4);
    expect({ count: exact.items.length + exact.unreadable.length, truncated: exact.truncated }).toEqual({ count: 4, truncated: false });
  });

  test('counters: settings rows only (hit data lives elsewhere), corrupt ones named', async () => {
    const counters = table('lcnt');
    const catalog = new CounterCatalog(counters, systemClock, 0);
    await catalog.create('visits', { mode: 'hits', partitions: 4, safetyWindowSeconds: 30 });
    await catalog.create('clicks', { mode: 'sharded', partitions: 8, safetyWindowSeconds: 30 });
    await (await counters()).createEntity({ partitionKey: 'odd', rowKey: 'counter', mode: 'nonsense' });
    await (await counters()).createEntity({ partitionKey: 'visits', rowKey: 'not-a-settings-row' });

    const listing = await catalog.list(100);
    expect(listing.items.map((c) => [c.name, c.definition.mode, c.definition.partitions])).toEqual([
      ['clicks', 'sharded', 8],
      ['visits', 'hits', 4],
    ]);
    expect(listing.unreadable.map((u) => u.name)).toEqual(['odd']);
  });

  test('a storage failure is a translated error naming what was being done (for the log, not the caller), not a partial list', async () => {
    const client = await table('lgone')();
    await client.deleteTable();
    const listing = listRows(client, { filter: "RowKey eq 'x'", limit: 10, doing: 'listing things' }, (row) => row);
    const err: unknown = await listing.catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'AppError', internal: expect.stringContaining('listing things') });
    expect((err as Error).message).not.toContain('listing things');
  });
});
