/**
 * Lists on Azurite, a page at a time: what can be read in key order, what cannot named (instead of
 * failing the page), every row exactly once by following continuation tokens, and a token that
 * serves only the list it was issued for.
 */
import type { TableClient } from '@azure/data-tables';

import { systemClock } from '../../../shared/clock';
import { CounterCatalog } from '../../../shared/counters/catalog';
import { defaultDefinition } from '../../../shared/sequences/definition';
import { SequenceStore } from '../../../shared/sequences/store';
import { listPage, type Page, type PageRequest } from '../../../shared/storage/list';
import { storageFor, uniqueTableName } from '../../support/sequences';

async function readAll<T>(list: (page: PageRequest) => Promise<Page<T>>, maxPageSize: number): Promise<{ pages: Page<T>[]; items: T[] }> {
  const pages: Page<T>[] = [];
  let continuationToken: string | undefined;
  do {
    const page = await list({ maxPageSize, continuationToken });
    pages.push(page);
    continuationToken = page.continuationToken;
  } while (continuationToken !== undefined);
  return { pages, items: pages.flatMap((p) => p.items) };
}

describe('lists, a page at a time', () => {
  const storage = storageFor();
  const table = (prefix: string): (() => Promise<TableClient>) => {
    const name = uniqueTableName(prefix);
    return () => storage.table(name);
  };

  test('sequences: readable ones in name order, a corrupt row named under unreadable, no token on the last page', async () => {
    const sequences = table('lseq');
    const store = new SequenceStore(sequences);
    for (const name of ['beta', 'alpha', 'gamma']) await store.create(name, defaultDefinition);
    await (await sequences()).createEntity({ partitionKey: 'broken', rowKey: 'sequence', next: 'not a number' });

    const all = await store.list({ maxPageSize: 10 });
    expect(all.items.map((s) => s.name)).toEqual(['alpha', 'beta', 'gamma']);
    expect(all.items[0]?.next).toBe(defaultDefinition.start);
    expect(all.unreadable).toEqual([{ name: 'broken', detail: expect.stringMatching(/corrupt/) }]);
    expect(all.continuationToken).toBeUndefined();

    const two = await store.list({ maxPageSize: 2 });
    expect(two.items.map((s) => s.name)).toEqual(['alpha', 'beta']);
    expect(two.continuationToken).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]+$/));
    const rest = await store.list({ maxPageSize: 2, continuationToken: two.continuationToken });
    expect({ items: rest.items.map((s) => s.name), unreadable: rest.unreadable.map((u) => u.name) }).toEqual({
      items: ['gamma'],
      unreadable: ['broken'],
    });
  });

  test('following the tokens reads every row once, in order, whatever the page size', async () => {
    const sequences = table('lall');
    const store = new SequenceStore(sequences);
    const names = Array.from({ length: 23 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    await Promise.all(names.map((name) => store.create(name, defaultDefinition)));
    for (const size of [1, 5, 22, 23, 1000]) {
      const { pages, items } = await readAll((page) => store.list(page), size);
      expect(items.map((s) => s.name)).toEqual(names);
      expect(pages.every((p) => p.items.length <= size)).toBe(true);
    }
  });

  test('a token is refused (ValidationFailed) on another list, when altered, or when it is not one at all', async () => {
    const sequences = table('ltok');
    const store = new SequenceStore(sequences);
    for (const name of ['a', 'b', 'c']) await store.create(name, defaultDefinition);
    const token = (await store.list({ maxPageSize: 1 })).continuationToken as string;
    const counters = new CounterCatalog(sequences, systemClock, 0);
    const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Record<string, unknown>;
    const altered = Buffer.from(JSON.stringify({ ...decoded, x: 1 })).toString('base64url');
    const rebound = Buffer.from(JSON.stringify({ ...decoded, l: 'A'.repeat(16) })).toString('base64url');
    for (const [list, bad] of [
      [(page: PageRequest) => counters.list(page), token],
      [(page: PageRequest) => store.list(page), altered],
      [(page: PageRequest) => store.list(page), rebound],
      [(page: PageRequest) => store.list(page), 'not-a-token'],
      [(page: PageRequest) => store.list(page), `${token}=`],
      [(page: PageRequest) => store.list(page), Buffer.from('{"v":1').toString('base64url')],
    ] as const) {
      await expect(list({ maxPageSize: 1, continuationToken: bad })).rejects.toMatchObject({
        code: 'ValidationFailed',
        issues: [{ path: 'query.continuationToken' }],
      });
    }
  });

  test('counters: settings rows only (hit data lives elsewhere), corrupt ones named', async () => {
    const counters = table('lcnt');
    const catalog = new CounterCatalog(counters, systemClock, 0);
    await catalog.create('visits', { mode: 'hits', partitions: 4, safetyWindowSeconds: 30 });
    await catalog.create('clicks', { mode: 'sharded', partitions: 8, safetyWindowSeconds: 30 });
    await (await counters()).createEntity({ partitionKey: 'odd', rowKey: 'counter', mode: 'nonsense' });
    await (await counters()).createEntity({ partitionKey: 'visits', rowKey: 'not-a-settings-row' });

    const listing = await catalog.list({ maxPageSize: 100 });
    expect(listing.items.map((c) => [c.name, c.definition.mode, c.definition.partitions])).toEqual([
      ['clicks', 'sharded', 8],
      ['visits', 'hits', 4],
    ]);
    expect(listing.unreadable.map((u) => u.name)).toEqual(['odd']);
  });

  test('a strict list fails on a row it cannot read instead of naming it', async () => {
    const client = await table('lstrict')();
    await client.createTable();
    await client.createEntity({ partitionKey: 'p', rowKey: 'r' });
    const query = { filter: "RowKey eq 'r'", list: 'things', doing: 'listing things', strict: true };
    const page = listPage(client, query, { maxPageSize: 10 }, () => {
      throw new Error('unreadable row');
    });
    await expect(page).rejects.toThrow('unreadable row');
  });

  test('a storage failure is a translated error naming what was being done (for the log, not the caller), not a partial list', async () => {
    const client = await table('lgone')();
    await client.deleteTable();
    const listing = listPage(
      client,
      { filter: "RowKey eq 'x'", list: 'things', doing: 'listing things' },
      { maxPageSize: 10 },
      (row) => row,
    );
    const err: unknown = await listing.catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'AppError', internal: expect.stringContaining('listing things') });
    expect((err as Error).message).not.toContain('listing things');
  });
});
