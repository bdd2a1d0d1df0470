/**
 * The fair-share table of docs/security.md ("Fair shares"), generated from the pools' settings and
 * the very functions that compute their shares (shared/shares.ts, shared/gates/waiterShares.ts), so
 * its figures are the defaults the code runs with. `npm run security:sync` writes it.
 */
import { counterSettings } from '../shared/counters/settings';
import { gateSettings } from '../shared/gates/settings';
import { waiterShare } from '../shared/gates/waiterShares';
import { httpSettings } from '../shared/http/settings';
import { jobSettings } from '../shared/jobs/settings';
import { scheduleSettings } from '../shared/schedules/settings';
import { sequenceSettings } from '../shared/sequences/settings';
import type { Setting } from '../shared/settings';
import { limitsOf, shareOf } from '../shared/shares';
import { streamSettings } from '../shared/streams/settings';
import { markdownTable } from './markdownTable';

export const sharesBlock = {
  begin: '<!-- BEGIN:shares (generated from docgen/sharesDoc.ts) -->',
  end: '<!-- END:shares -->',
};

interface PoolDoc {
  readonly pool: string;
  readonly scope: string;
  readonly capacity: Setting<number>;
  /** A setting of its own, or a fraction of the capacity (computed as the pool computes it). */
  readonly share: Setting<number> | ((capacity: number) => number);
  readonly refusal: string;
}

const quarterOf = (capacity: number): number => shareOf(capacity).share;

const pools: readonly PoolDoc[] = [
  {
    pool: 'lease waiters (`POST /api/processors/{name}/leases`)',
    scope: 'per instance',
    capacity: jobSettings.settings.maxLeaseWaiters,
    share: quarterOf,
    refusal:
      'the oldest wait of that identity, or of the largest holder, answers `204` (as a wait that ran out); `wait: 0` takes no place: never refused for room',
  },
  {
    pool: 'long polls and event streams (`GET /api/gates/{name}/wait`, `/events`)',
    scope: 'per instance',
    capacity: httpSettings.settings.maxHeld,
    share: quarterOf,
    refusal:
      'the oldest held request of that identity, or of the largest holder, ends: a long poll answers its "not yet", an event stream ends (clients reconnect)',
  },
  {
    pool: 'unfinished jobs (`POST /api/jobs`; the jobs of schedules and gated runs too)',
    scope: 'deployment (storage)',
    capacity: jobSettings.settings.maxOpen,
    share: jobSettings.settings.maxOpenPerOwner,
    refusal: '`429` for that identity only; a full pool `429`',
  },
  {
    pool: 'waiting runs of a gate generation (`POST /api/gates/{name}/runs`)',
    scope: 'per generation (storage)',
    capacity: gateSettings.settings.maxWaiters,
    share: waiterShare,
    refusal: '`429` for that identity only; a full generation `429`',
  },
  {
    pool: "a stream writer's producers (`POST /api/streams/{type}/events`)",
    scope: 'per writer (storage)',
    capacity: streamSettings.settings.maxProducers,
    share: streamSettings.settings.maxProducersPerCaller,
    refusal: '`429` for that identity only; a full writer `429` for new producers',
  },
  {
    pool: 'live schedules (`POST /api/schedules`)',
    scope: 'deployment (storage)',
    capacity: scheduleSettings.settings.maxLive,
    share: quarterOf,
    refusal: '`429` for that identity only; a full pool `409` (admin creates take no place)',
  },
  {
    pool: 'auto-created counters (`POST /api/counters/{name}/increment`, when on)',
    scope: 'deployment (storage)',
    capacity: counterSettings.settings.maxAutoCreated,
    share: quarterOf,
    refusal: '`429` for that identity only; a full pool `409` (admin-configured counters take no place)',
  },
  {
    pool: 'auto-created sequences (`POST /api/sequences/{name}/next`, when on)',
    scope: 'deployment (storage)',
    capacity: sequenceSettings.settings.maxAutoCreated,
    share: quarterOf,
    refusal: '`429` for that identity only; a full pool `409` (admin-configured sequences take no place)',
  },
];

const figure = (n: number): string => n.toLocaleString('en-US');

function shareCell(pool: PoolDoc): string {
  const capacity = pool.capacity.fallback;
  if (typeof pool.share === 'function') return `a quarter (${figure(pool.share(capacity))})`;
  return `\`${pool.share.env}\` (${figure(limitsOf(capacity, pool.share.fallback).share)})`;
}

export function sharesMarkdown(): string {
  const rows = pools.map((p) => [p.pool, p.scope, `\`${p.capacity.env}\` (${figure(p.capacity.fallback)})`, shareCell(p), p.refusal]);
  return markdownTable(
    ['pool', 'scope', 'capacity (default)', 'one identity may hold', 'when an identity is at its share, or the pool is full'],
    rows,
  );
}
