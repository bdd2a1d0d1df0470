import { ManualClock } from '../../../shared/clock';
import { maxCachedRoutes, RouteResolver } from '../../../shared/streams/resolver';
import { defaultRoute, fnv1a, type StreamRoute } from '../../../shared/streams/route';
import type { StoredRoute } from '../../../shared/streams/routeTable';

function table(rows: Map<string, StreamRoute>) {
  return {
    reads: 0,
    get(type: string): Promise<StoredRoute | undefined> {
      this.reads++;
      const route = rows.get(type);
      return Promise.resolve(route === undefined ? undefined : { route, etag: 'e' });
    },
  };
}

describe('route resolver', () => {
  it('hashes types without a row onto a stable partition and a resource of their own', () => {
    expect(fnv1a('orders')).toBe(fnv1a('orders'));
    expect(fnv1a('')).toBe(0x811c9dc5);
    const route = defaultRoute('orders', 4);
    expect(route).toEqual({ type: 'orders', partition: `p0${fnv1a('orders') % 4}`, resource: 'orders', version: 0, source: 'default' });
    const spread = new Set(Array.from({ length: 200 }, (_, i) => defaultRoute(`type-${i}`, 8).partition));
    expect(spread.size).toBe(8);
  });

  it('serves a route from its cache until the TTL passes, then reads the table again', async () => {
    const clock = new ManualClock();
    const rows = new Map<string, StreamRoute>([
      ['orders', { type: 'orders', partition: 'p09', resource: 'o', version: 3, source: 'table' }],
    ]);
    const t = table(rows);
    const resolver = new RouteResolver({ table: t, clock, ttlMs: 30_000, partitions: 4 });
    expect((await resolver.resolve('orders')).partition).toBe('p09');
    rows.set('orders', { type: 'orders', partition: 'p10', resource: 'o', version: 4, source: 'table' });
    await clock.advance(29_999);
    expect((await resolver.resolve('orders')).partition).toBe('p09');
    expect(t.reads).toBe(1);
    await clock.advance(1);
    expect((await resolver.resolve('orders')).partition).toBe('p10');
    expect(t.reads).toBe(2);
  });

  it('reads the table again at once after an invalidation (a remap in this process)', async () => {
    const clock = new ManualClock();
    const rows = new Map<string, StreamRoute>();
    const t = table(rows);
    const resolver = new RouteResolver({ table: t, clock, ttlMs: 30_000, partitions: 4 });
    expect((await resolver.resolve('orders')).source).toBe('default');
    rows.set('orders', { type: 'orders', partition: 'p07', resource: 'orders', version: 1, source: 'table' });
    resolver.invalidate('orders');
    expect(await resolver.resolve('orders')).toMatchObject({ partition: 'p07', version: 1 });
    expect(resolver.cachedUntil('orders')).toBe(clock.now() + 30_000);
  });

  it('does not cache a failed lookup', async () => {
    const clock = new ManualClock();
    let fail = true;
    const resolver = new RouteResolver({
      table: { get: () => (fail ? Promise.reject(new Error('storage down')) : Promise.resolve(undefined)) },
      clock,
      ttlMs: 30_000,
      partitions: 4,
    });
    await expect(resolver.resolve('orders')).rejects.toThrow('storage down');
    fail = false;
    expect((await resolver.resolve('orders')).source).toBe('default');
  });
});

describe('the route cache is bounded', () => {
  it('callers inventing types cannot grow it past maxCachedRoutes; expired entries go first', async () => {
    const clock = new ManualClock();
    const resolver = new RouteResolver({ table: table(new Map()), clock, ttlMs: 30_000, partitions: 4 });
    for (let i = 0; i < maxCachedRoutes + 500; i++) await resolver.resolve(`spam-${i}`);
    expect(resolver.size).toBe(maxCachedRoutes);
    // The newest entries survive; the oldest were dropped to make room.
    expect(resolver.cachedUntil(`spam-${maxCachedRoutes + 499}`)).toBeDefined();
    expect(resolver.cachedUntil('spam-0')).toBeUndefined();
    await clock.advance(31_000);
    await resolver.resolve('fresh');
    expect(resolver.size).toBe(1);
  });
});
