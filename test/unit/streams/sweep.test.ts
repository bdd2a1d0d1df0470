import type { LedgerState, WriterSnapshot } from '../../../shared/streams/ledger';
import { defaultRoute, type StreamRoute } from '../../../shared/streams/route';
import { type SweepDeps, sweepWriters } from '../../../shared/streams/sweep';

const now = Date.UTC(2026, 0, 1, 12);

function ledger(buffered: number, oldestAgoMs: number | null): LedgerState {
  const snapshot = {
    rev: 1,
    accepted: buffered,
    flushedThrough: 0,
    buffered,
    inflight: 0,
    flushIntervalMs: 1000,
    oldestAt: oldestAgoMs === null ? null : now - oldestAgoMs,
  } as WriterSnapshot;
  return { snapshot, receipts: [] };
}

function deps(routes: StreamRoute[], own: StreamRoute[], ledgers: Record<string, LedgerState | undefined>) {
  const kicked: string[] = [];
  const pages: (string | undefined)[] = [];
  const d: SweepDeps = {
    // Two routes a page, so the sweep must follow the continuation.
    routes: (page) => {
      pages.push(page.continuationToken);
      const at = Number(page.continuationToken ?? '0');
      const next = at + 2;
      return Promise.resolve({
        items: routes.slice(at, next),
        unreadable: [],
        ...(next < routes.length ? { continuationToken: String(next) } : {}),
      });
    },
    ownRoutes: () => Promise.resolve(own),
    readLedger: (key) => Promise.resolve(ledgers[key]),
    kick: (key) => {
      kicked.push(key);
      return Promise.resolve();
    },
    now: () => now,
  };
  return { d, kicked, pages };
}

describe('streams sweep (the flushers without traffic)', () => {
  it('kicks exactly the writers whose oldest unflushed event is overdue, own types included, across pages', async () => {
    const [a, b, c] = ['a', 'b', 'c'].map((t) => defaultRoute(t, 4)) as [StreamRoute, StreamRoute, StreamRoute];
    // Two types remapped onto one writer: read and kicked once.
    const shared: StreamRoute = { type: 'd', partition: a.partition, resource: a.resource, version: 1, source: 'table' };
    const own = defaultRoute('billing-invoices', 4);
    const key = (r: StreamRoute): string => `${r.partition}:${r.resource}`;
    const { d, kicked, pages } = deps([a, b, c, shared], [own], {
      [key(a)]: ledger(3, 60_000), // overdue: 2 T + 5 s is 7 s
      [key(b)]: ledger(3, 1000), // within its interval
      [key(c)]: ledger(0, null), // nothing to flush
      [key(own)]: ledger(1, 10_000), // overdue, an own type
    });
    const result = await sweepWriters(d);
    expect(pages).toEqual([undefined, '2']);
    expect(result.writers).toBe(4);
    expect(kicked.sort()).toEqual([key(a), key(own)].sort());
    expect([...result.kicked].sort()).toEqual(kicked);
  });

  it('kicks nothing when no writer has reported yet', async () => {
    const { d, kicked } = deps([defaultRoute('a', 4)], [], {});
    expect(await sweepWriters(d)).toEqual({ writers: 1, kicked: [] });
    expect(kicked).toEqual([]);
  });
});
