/**
 * The idempotency sweep on Azurite: expired rows go (one conditional delete each), live ones stay,
 * bounded per run; a row a request re-uses between the sweep's read and its delete is
 * kept; a second sweep racing the first is harmless; and a request whose expired row the sweep
 * deletes under it still stores its answer.
 */
import type { TableClient } from '@azure/data-tables';

import { ManualClock } from '../../shared/clock';
import { IdempotencyStore } from '../../shared/idempotency';
import { deleteExpired, findExpired, sweepIdempotency } from '../../shared/idempotencySweep';
import { storageFor, uniqueTableName } from '../support/sequences';

const ttlSeconds = 60;

interface Fixture {
  readonly table: TableClient;
  readonly clock: ManualClock;
  readonly store: IdempotencyStore;
  /** Stores `keys` answers in `scope` at the current time. */
  keep(scope: string, keys: readonly string[]): Promise<void>;
  rows(): Promise<{ partitionKey: string; rowKey: string }[]>;
}

function fixture(observe?: (service: string, method: string, url: string) => void): Promise<Fixture> {
  const storage = storageFor(undefined, observe === undefined ? {} : { observe });
  const name = uniqueTableName('idem');
  const clock = new ManualClock();
  const store = new IdempotencyStore(() => storage.table(name), clock, ttlSeconds);
  return storage.table(name).then((table) => ({
    table,
    clock,
    store,
    keep: async (scope, keys) => {
      for (let i = 0; i < keys.length; i += 50) {
        await Promise.all(keys.slice(i, i + 50).map((key) => store.run(scope, key, () => Promise.resolve({ key }))));
      }
    },
    rows: async () => {
      const out: { partitionKey: string; rowKey: string }[] = [];
      for await (const e of table.listEntities({ queryOptions: { select: ['PartitionKey', 'RowKey'] } }))
        out.push({ partitionKey: e.partitionKey ?? '', rowKey: e.rowKey ?? '' });
      return out;
    },
  }));
}

const keys = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe('idempotency sweep on Azurite', () => {
  it('deletes expired rows, one conditional delete each, and keeps live ones', async () => {
    const deletes: string[] = [];
    const f = await fixture((service, method, url) => {
      if (service === 'table' && method === 'DELETE') deletes.push(url);
    });
    await f.keep('sequences:a', keys('old', 150));
    await f.keep('sequences:b', keys('old', 3));
    await f.clock.advance((ttlSeconds + 1) * 1000);
    await f.keep('sequences:a', keys('new', 5));

    const report = await sweepIdempotency(f.table, f.clock);

    expect(report).toEqual({ expired: 153, deleted: 153, kept: 0, gone: 0, truncated: false });
    expect(deletes).toHaveLength(153);
    const left = await f.rows();
    expect(left).toHaveLength(5);
    expect(new Set(left.map((r) => r.partitionKey))).toEqual(new Set(['sequences:a']));
    // The live answers are still served.
    expect(await f.store.run('sequences:a', 'new-0', () => Promise.resolve({ key: 'recomputed' }))).toEqual({ key: 'new-0' });
    // Nothing is left to do: a second run deletes nothing.
    expect(await sweepIdempotency(f.table, f.clock)).toMatchObject({ expired: 0, deleted: 0 });
  });

  it('bounds the work of one run and says that more is left', async () => {
    const f = await fixture();
    await f.keep('jobs', keys('k', 30));
    await f.clock.advance((ttlSeconds + 1) * 1000);
    expect(await sweepIdempotency(f.table, f.clock, 20)).toMatchObject({ expired: 20, deleted: 20, truncated: true });
    expect(await f.rows()).toHaveLength(10);
    expect(await sweepIdempotency(f.table, f.clock, 20)).toMatchObject({ expired: 10, deleted: 10, truncated: false });
    expect(await f.rows()).toHaveLength(0);
  });

  it('keeps a row that a request re-used between the sweep reading it and deleting it, and deletes the rest', async () => {
    const f = await fixture();
    await f.keep('sequences:a', keys('k', 10));
    await f.clock.advance((ttlSeconds + 1) * 1000);
    const expired = await findExpired(f.table, f.clock.now(), 100);
    expect(expired).toHaveLength(10);
    // The key comes back after its TTL: the request computes a new answer and rewrites the row.
    expect(await f.store.run('sequences:a', 'k-3', () => Promise.resolve({ key: 'fresh' }))).toEqual({ key: 'fresh' });

    expect(await deleteExpired(f.table, expired)).toEqual({ deleted: 9, kept: 1, gone: 0 });
    expect(await f.rows()).toHaveLength(1);
    expect(await f.store.run('sequences:a', 'k-3', () => Promise.resolve({ key: 'again' }))).toEqual({ key: 'fresh' });
  });

  it('is harmless when two sweeps race: every expired row is deleted once, the other sweep counts it gone', async () => {
    const f = await fixture();
    await f.keep('counters', keys('k', 40));
    await f.clock.advance((ttlSeconds + 1) * 1000);
    const seenByFirst = await findExpired(f.table, f.clock.now(), 100);
    const second = await sweepIdempotency(f.table, f.clock);
    const first = await deleteExpired(f.table, seenByFirst);
    expect(second.deleted).toBe(40);
    expect(first).toEqual({ deleted: 0, kept: 0, gone: 40 });
    expect(await f.rows()).toHaveLength(0);
  });

  it('lets a request store its answer when the sweep deleted its expired row while it computed', async () => {
    const f = await fixture();
    await f.keep('sequences:a', ['k']);
    await f.clock.advance((ttlSeconds + 1) * 1000);
    const answer = await f.store.run('sequences:a', 'k', async () => {
      expect((await sweepIdempotency(f.table, f.clock)).deleted).toBe(1);
      return { key: 'fresh' };
    });
    expect(answer).toEqual({ key: 'fresh' });
    expect(await f.store.run('sequences:a', 'k', () => Promise.resolve({ key: 'again' }))).toEqual({ key: 'fresh' });
  });
});
