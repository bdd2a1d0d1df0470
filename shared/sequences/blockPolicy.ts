/**
 * Block sizing. Each instance aims for one refill per target interval: a block that ran out in less
 * than half the interval was too small (double it), one that lasted more than twice the interval was
 * too big (halve it), anything between is left alone — the dead band keeps the size from flapping.
 * Big blocks save storage writes; small blocks bound the gap a crash leaves.
 */
import type { Clock } from '../clock';
import type { BlockSizeBounds } from './definition';

export interface BlockSizeInput {
  readonly previous: number;
  /** How long the previous block lasted: the time between the last two refills. */
  readonly lastedMs: number;
  readonly targetMs: number;
  readonly bounds: BlockSizeBounds;
}

export function clampBlockSize(size: number, bounds: BlockSizeBounds): number {
  return Math.min(bounds.max, Math.max(bounds.min, Math.round(size)));
}

export function nextBlockSize({ previous, lastedMs, targetMs, bounds }: BlockSizeInput): number {
  if (lastedMs < targetMs / 2) return clampBlockSize(previous * 2, bounds);
  if (lastedMs > targetMs * 2) return clampBlockSize(previous / 2, bounds);
  return clampBlockSize(previous, bounds);
}

/**
 * The policy applied over time. `propose()` gives the size for a refill starting now; `record()`
 * notes a refill that succeeded, so a failed one (storage down) neither counts as a block that ran
 * out fast nor inflates the size. The first block is the minimum.
 */
export class BlockSizer {
  private size: number;
  private lastRefillAt: number | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly bounds: BlockSizeBounds,
    private readonly targetMs: number,
  ) {
    this.size = bounds.min;
  }

  /** The size of the last recorded refill (the minimum before any). */
  get current(): number {
    return this.size;
  }

  propose(): number {
    if (this.lastRefillAt === undefined) return this.size;
    return nextBlockSize({
      previous: this.size,
      lastedMs: this.clock.now() - this.lastRefillAt,
      targetMs: this.targetMs,
      bounds: this.bounds,
    });
  }

  /** A refill with the proposed `size`, started at `startedAt`, succeeded. */
  record(size: number, startedAt: number): void {
    this.size = size;
    this.lastRefillAt = startedAt;
  }
}
