/**
 * Fair shares: every pool a caller can fill (lease waiters, held requests, open jobs, gate waiters,
 * stream producers) has a capacity and a share, the most one identity (a Caller id) may hold of it,
 * so one caller can never fill a pool for the others. docs/security.md "Fair shares" has the table.
 *
 * Two answers when a pool has no room for a newcomer, chosen per pool:
 * - `refuse`: the identity at its share is refused (a 429 for it alone); a full pool refuses too,
 *   which takes several identities at their share, never one.
 * - `preempt`: nobody is refused. An identity at its share gives up its own oldest place; otherwise,
 *   a full pool takes the oldest place of its largest holder. A place taken answers what a timeout
 *   answers (a long poll's "nothing yet", an SSE stream's end), so its client simply asks again.
 *
 * `verdict` is the rule itself, pure, so a durable pool (its counts in storage, checked under the
 * same conditional write as the total) and the streams writer's reducer decide exactly as the
 * in-memory `HeldPool` does.
 */

/** A pool's figures: `share` ≤ `capacity`, both ≥ 1. */
export interface ShareLimits {
  readonly capacity: number;
  readonly share: number;
}

/** The share of a pool whose design gives each identity a fraction of it (25% unless said), at least one place. */
export function shareOf(capacity: number, fraction = 0.25): ShareLimits {
  return { capacity, share: Math.max(1, Math.min(capacity, Math.floor(capacity * fraction))) };
}

/** Limits whose share is its own setting (bounded by the capacity). */
export function limitsOf(capacity: number, share: number): ShareLimits {
  return { capacity, share: Math.max(1, Math.min(capacity, share)) };
}

export type Verdict = 'admit' | 'overShare' | 'full';

/** Whether an identity holding `held` places (the new ones counted) holds more than `share`. */
export function exceedsShare(held: number, share: number): boolean {
  return held > share;
}

/** Whether one more place may go to an identity that holds `held` of a pool holding `total`. */
export function verdict(limits: ShareLimits, total: number, held: number): Verdict {
  if (exceedsShare(held + 1, limits.share)) return 'overShare';
  if (total >= limits.capacity) return 'full';
  return 'admit';
}

/** A place in a HeldPool: `release` gives it back (once; later calls do nothing). */
export interface Place {
  release(): void;
}

interface Entry {
  readonly identity: string;
  /** Called when the place is taken from it (preempt pools). */
  readonly onPreempt: () => void;
  released: boolean;
}

export type Admission = { readonly ok: true; readonly place: Place } | { readonly ok: false; readonly why: 'overShare' | 'full' };

/**
 * An in-memory pool (one per instance: its places are requests this instance holds open). Its
 * bookkeeping is synchronous, so concurrent requests of one event loop cannot both take the last
 * place. `limits` is read at each admission (settings may be injected later than construction).
 */
export class HeldPool {
  /** Every identity's places, oldest first (Map iteration order is insertion order). */
  private readonly byIdentity = new Map<string, Set<Entry>>();
  private count = 0;

  constructor(
    private readonly limits: () => ShareLimits,
    private readonly policy: 'refuse' | 'preempt',
  ) {}

  /** Takes a place for `identity`; in a preempt pool this always succeeds (someone's oldest place may go). */
  admit(identity: string, onPreempt: () => void = () => undefined): Admission {
    const limits = this.limits();
    const mine = this.byIdentity.get(identity);
    const why = verdict(limits, this.count, mine?.size ?? 0);
    if (why !== 'admit') {
      if (this.policy === 'refuse') return { ok: false, why };
      this.makeRoom(identity, limits);
    }
    const entry: Entry = { identity, onPreempt, released: false };
    const set = this.byIdentity.get(identity) ?? new Set<Entry>();
    set.add(entry);
    this.byIdentity.set(identity, set);
    this.count++;
    return { ok: true, place: { release: () => this.release(entry) } };
  }

  /** Places held now, in all or by one identity. */
  held(identity?: string): number {
    return identity === undefined ? this.count : (this.byIdentity.get(identity)?.size ?? 0);
  }

  /** Gives up oldest places until `identity`, and the pool, have room for one more (a lowered setting may take several). */
  private makeRoom(identity: string, limits: ShareLimits): void {
    while (this.held(identity) >= limits.share) this.evictOldest(identity);
    while (this.count >= limits.capacity) this.evictOldest(this.largestHolder());
  }

  private evictOldest(identity: string): void {
    const oldest = this.byIdentity.get(identity)?.values().next().value;
    if (oldest === undefined) throw new Error(`HeldPool: ${identity} holds no place to give up`);
    this.release(oldest);
    oldest.onPreempt();
  }

  private largestHolder(): string {
    let largest = '';
    let size = -1;
    for (const [identity, set] of this.byIdentity) {
      if (set.size > size) {
        largest = identity;
        size = set.size;
      }
    }
    return largest;
  }

  private release(entry: Entry): void {
    if (entry.released) return;
    entry.released = true;
    this.count--;
    const set = this.byIdentity.get(entry.identity);
    set?.delete(entry);
    if (set?.size === 0) this.byIdentity.delete(entry.identity);
  }
}
