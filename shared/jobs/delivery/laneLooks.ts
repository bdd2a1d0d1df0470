/**
 * When the lease hub looks at a retry lane (./leaseHub.ts): a lane found empty is left for its look
 * interval (a quarter of TALLYHO_JOBS_LEASE_POLL_MAX_MS), unless a batch this instance put back in it
 * falls due sooner (`due`). This instance's memory only: another instance keeps its own, and without
 * the due times the look interval still holds.
 */
import type { Clock } from '../../clock';

/** Due times remembered per lane (past this, a lane's retries rely on its look interval alone). */
const maxDueTimes = 10_000;

export class LaneLooks {
  /** When each lane found empty is looked at again. */
  private readonly nextLook = new Map<string, number>();
  /** When batches put back in each lane fall due. */
  private readonly dueTimes = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    private readonly lookMs: number,
  ) {}

  /** A batch of `lane` falls due at `at` (ms, visible by then). */
  due(lane: string, at: number): void {
    const times = this.dueTimes.get(lane) ?? [];
    if (times.length >= maxDueTimes) return;
    times.push(at);
    this.dueTimes.set(lane, times);
  }

  /** Whether to look at `lane` now: a due time has come (those that have are forgotten), or its look interval passed. */
  lookNow(lane: string): boolean {
    const now = this.clock.now();
    return this.dueNow(lane, now) || now >= (this.nextLook.get(lane) ?? 0);
  }

  /** What a look found: an empty lane (fewer than asked for) is left for the look interval. */
  looked(lane: string, empty: boolean): void {
    if (empty) this.nextLook.set(lane, this.clock.now() + this.lookMs);
    else this.nextLook.delete(lane);
  }

  /** The soonest due time of `lane` (Infinity: none), for the poll's pause. */
  soonest(lane: string): number {
    return Math.min(...(this.dueTimes.get(lane) ?? []));
  }

  private dueNow(lane: string, now: number): boolean {
    const times = this.dueTimes.get(lane);
    if (times === undefined || !times.some((t) => t <= now)) return false;
    const later = times.filter((t) => t > now);
    if (later.length === 0) this.dueTimes.delete(lane);
    else this.dueTimes.set(lane, later);
    return true;
  }
}
