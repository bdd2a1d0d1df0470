/** The routes table on Azurite: conditional writes, and the resolver reading through it. */
import { ManualClock } from '../../../shared/clock';
import { RouteResolver } from '../../../shared/streams/resolver';
import { RouteTable } from '../../../shared/streams/routeTable';
import { storageFor, uniqueTableName } from '../../support/sequences';

describe('stream routes table', () => {
  const storage = storageFor();
  const name = uniqueTableName('routes');
  const routes = new RouteTable(() => storage.table(name));

  it('inserts once, then only replaces the version that was read', async () => {
    expect(await routes.get('orders')).toBeUndefined();
    const v1 = {
      type: 'orders',
      partition: 'p07',
      resource: 'orders',
      version: 1,
      source: 'table' as const,
      previous: { partition: 'p02', resource: 'orders', version: 0 },
    };
    expect(await routes.put(v1, undefined)).toBe(true);
    expect(await routes.put({ ...v1, partition: 'p08' }, undefined)).toBe(false);
    const stored = await routes.get('orders');
    expect(stored?.route).toEqual(v1);
    const v2 = { ...v1, partition: 'p09', version: 2, previous: { partition: 'p07', resource: 'orders', version: 1 } };
    expect(await routes.put(v2, stored?.etag)).toBe(true);
    // A writer that read v1 loses: the ETag is no longer current.
    expect(await routes.put({ ...v2, partition: 'p10' }, stored?.etag)).toBe(false);
    expect((await routes.get('orders'))?.route.partition).toBe('p09');
  });

  it('resolves through the table, caching until invalidated', async () => {
    const clock = new ManualClock();
    const resolver = new RouteResolver({ table: routes, clock, ttlMs: 60_000, partitions: 4 });
    expect(await resolver.resolve('refunds')).toMatchObject({ source: 'default', version: 0, resource: 'refunds' });
    await routes.put({ type: 'refunds', partition: 'p03', resource: 'money', version: 1, source: 'table' }, undefined);
    expect((await resolver.resolve('refunds')).source).toBe('default');
    resolver.invalidate('refunds');
    expect(await resolver.resolve('refunds')).toMatchObject({ source: 'table', partition: 'p03', resource: 'money', version: 1 });
    expect(resolver.lookups).toBe(2);
  });
});
