/**
 * Event type -> route, cached per process for TALLYHO_STREAMS_ROUTE_CACHE_SECONDS. A remap through
 * this process invalidates its entry at once; other instances may keep the old route until their
 * entry expires. That is safe: the old writer refuses the type once it has released it (`notOwner`),
 * and the caller then invalidates and resolves again (see service.ts).
 */
import type { Clock } from '../clock';
import { defaultRoute, type StreamRoute } from './route';
import type { RouteTable } from './routeTable';

/** Routes one process caches at most. */
export const maxCachedRoutes = 10_000;

interface Entry {
  readonly route: Promise<StreamRoute>;
  readonly expiresAt: number;
}

export interface ResolverOptions {
  readonly table: Pick<RouteTable, 'get'>;
  readonly clock: Clock;
  readonly ttlMs: number;
  readonly partitions: number;
}

export class RouteResolver {
  private readonly cache = new Map<string, Entry>();
  /** Table reads made (a test and the GET endpoint show whether the cache works). */
  lookups = 0;

  constructor(private readonly options: ResolverOptions) {}

  async resolve(type: string): Promise<StreamRoute> {
    const now = this.options.clock.now();
    const cached = this.cache.get(type);
    if (cached !== undefined && cached.expiresAt > now) return cached.route;
    const route = this.lookup(type);
    const entry = { route, expiresAt: now + this.options.ttlMs };
    this.makeRoom(now);
    this.cache.set(type, entry);
    // A failed lookup must not be served from the cache.
    route.catch(() => {
      if (this.cache.get(type) === entry) this.cache.delete(type);
    });
    return route;
  }

  /** When the cached route of `type` expires (undefined: not cached). */
  cachedUntil(type: string): number | undefined {
    return this.cache.get(type)?.expiresAt;
  }

  /** Entries cached now (bounded by maxCachedRoutes). */
  get size(): number {
    return this.cache.size;
  }

  /** Callers choose the types: expired entries go once the cache is full, then the oldest. */
  private makeRoom(now: number): void {
    if (this.cache.size < maxCachedRoutes) return;
    for (const [type, entry] of this.cache) if (entry.expiresAt <= now) this.cache.delete(type);
    while (this.cache.size >= maxCachedRoutes) {
      const oldest = this.cache.keys().next();
      if (oldest.done === true) break;
      this.cache.delete(oldest.value);
    }
  }

  invalidate(type: string): void {
    this.cache.delete(type);
  }

  private async lookup(type: string): Promise<StreamRoute> {
    this.lookups++;
    const stored = await this.options.table.get(type);
    return stored?.route ?? defaultRoute(type, this.options.partitions);
  }
}
