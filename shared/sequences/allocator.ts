/**
 * One instance's allocator for one sequence. It reserves blocks of numbers with a conditional write
 * on the sequence entity and hands numbers out from memory, so almost every request is served
 * without touching storage:
 *
 * - Numbers are issued strictly in order within this instance; a request for N numbers gets N
 *   consecutive ones (possibly spanning blocks). Requests that cannot be served from the numbers in
 *   hand queue in arrival order, so nobody overtakes a request that is waiting at a block boundary.
 * - The next block is prefetched when 10% or less of the newest block remains. At most one refill
 *   is in flight, however many requests are waiting; waiters are served when it lands.
 * - Lost races (412) are retried with jittered back-off, bounded by attempts and time; then every
 *   waiter gets a 503 with Retry-After, and no number in hand is lost.
 * - A write whose response was lost may still have landed; the next read recognises our own token
 *   in the entity and keeps the block instead of leaving a gap.
 * - `close()` returns the unused tail when the stored high-water mark still equals the end of our
 *   newest block (conditional write). Anything it cannot return is logged as a gap.
 *
 * One file (about 400 lines) because these rules share one piece of state — the blocks in hand, the
 * queue of waiters, the refill in flight — that every step reads and changes; split, each part would
 * reach into the others'.
 */
import type { Clock, Random } from '../clock';
import { AppError, isAppError } from '../errors';
import type { Logger } from '../log';
import { type BackoffPolicy, retryLostRaces, type RetryContext } from '../retry';
import { BlockSizer, clampBlockSize } from './blockPolicy';
import { type BlockSizeBounds, maxSequenceValue, type SequenceDefinition } from './definition';
import type { SequenceStore, StoredSequence } from './store';

/** Numbers `lo` (inclusive) to `hi` (exclusive). */
export interface NumberRange {
  readonly lo: number;
  readonly hi: number;
}

export interface AllocatorOptions {
  readonly store: SequenceStore;
  /** The sequence as last read; its definition drives block sizing. */
  readonly sequence: StoredSequence;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly backoff: BackoffPolicy;
  /** Unique per allocator; marks its writes so a lost response can be recognised. */
  readonly instanceId: string;
  /** Prefetch when this fraction of the newest block or less remains; 0 turns prefetching off. */
  readonly prefetchAt?: number;
  /** Replaces the definition's block-size bounds (benchmarks use fixed blocks). */
  readonly blockSize?: BlockSizeBounds;
  /** Told how long each reservation took (ms) and whether it reserved a block (the service's metric). */
  readonly onReservation?: (ms: number, reserved: boolean) => void;
}

export interface AllocatorStats {
  /** Size of the newest block. */
  readonly blockSize: number;
  /** Numbers in hand (current and prefetched blocks). */
  readonly remaining: number;
  readonly issued: number;
  readonly refills: number;
  readonly refillInFlight: boolean;
  readonly refillFailures: number;
  /** Conditional writes that lost to another writer (412) and were retried. */
  readonly retries412: number;
  /** Refills that ran out of attempts or time under contention (each a 503 to its waiters). */
  readonly retriesExhausted: number;
  /** Writes whose response was lost but which were recognised as ours on the next read. */
  readonly recoveredWrites: number;
  /** Requests that had to wait for a refill, and the longest such wait. */
  readonly boundaryWaits: number;
  readonly longestBoundaryWaitMs: number;
  readonly lastRefillAt: string | null;
  readonly closed: boolean;
}

export interface CloseReport {
  /** Given back to storage: the high-water mark was moved down to `lo`. */
  readonly returned: NumberRange | undefined;
  /** Reserved but never issued and not returned: gaps in the sequence. */
  readonly abandoned: readonly NumberRange[];
}

interface Block {
  readonly lo: number;
  cursor: number;
  readonly hi: number;
}

interface Waiter {
  readonly count: number;
  readonly since: number;
  readonly resolve: (numbers: number[]) => void;
  readonly reject: (err: unknown) => void;
}

interface PendingWrite extends NumberRange {
  readonly token: string;
}

export class SequenceAllocator {
  readonly name: string;
  readonly definition: SequenceDefinition;
  private readonly blocks: Block[] = [];
  private readonly waiters: Waiter[] = [];
  private remaining = 0;
  private newestBlockSize = 0;
  private refill: Promise<void> | undefined;
  private closing: Promise<CloseReport> | undefined;
  /** The entity as we last wrote or read it; undefined means "re-read before the next write". */
  private state: StoredSequence | undefined;
  /** A write whose outcome we never heard. */
  private pending: PendingWrite | undefined;
  private writeCount = 0;
  private readonly sizer: BlockSizer;
  private readonly bounds: BlockSizeBounds;
  private readonly prefetchAt: number;
  private readonly retry: RetryContext;
  private readonly counts = {
    issued: 0,
    refills: 0,
    refillFailures: 0,
    retries412: 0,
    retriesExhausted: 0,
    recoveredWrites: 0,
    boundaryWaits: 0,
    longestBoundaryWaitMs: 0,
  };
  private lastRefillAt: number | undefined;

  constructor(private readonly options: AllocatorOptions) {
    this.name = options.sequence.name;
    this.definition = options.sequence.definition;
    this.state = options.sequence;
    this.bounds = options.blockSize ?? options.sequence.definition.blockSize;
    this.prefetchAt = options.prefetchAt ?? 0.1;
    this.sizer = new BlockSizer(options.clock, this.bounds, options.sequence.definition.refillTargetSeconds * 1000);
    this.retry = {
      clock: options.clock,
      random: options.random,
      policy: options.backoff,
      logger: options.logger,
      subject: `sequence ${this.name}`,
      onLostRace: () => this.counts.retries412++,
    };
  }

  /** The next `count` numbers of this instance, consecutive and in order. */
  take(count: number): Promise<number[]> {
    if (this.closing !== undefined) return Promise.reject(this.shuttingDown());
    if (this.waiters.length === 0 && this.remaining >= count) {
      const numbers = this.issue(count);
      this.maybePrefetch();
      return Promise.resolve(numbers);
    }
    return new Promise<number[]>((resolve, reject) => {
      this.waiters.push({ count, since: this.options.clock.now(), resolve, reject });
      this.serveWaiters();
    });
  }

  stats(): AllocatorStats {
    return {
      ...this.counts,
      blockSize: this.newestBlockSize,
      remaining: this.remaining,
      refillInFlight: this.refill !== undefined,
      lastRefillAt: this.lastRefillAt === undefined ? null : new Date(this.lastRefillAt).toISOString(),
      closed: this.closing !== undefined,
    };
  }

  /** Stops issuing, waits for an in-flight refill, and returns the unused tail if it still can. */
  close(): Promise<CloseReport> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private issue(count: number): number[] {
    const numbers = new Array<number>(count);
    let i = 0;
    while (i < count) {
      const block = this.blocks[0];
      if (block === undefined) throw new AppError('Internal', `Sequence ${this.name}: issued past the numbers in hand`);
      const end = Math.min(block.hi, block.cursor + count - i);
      while (block.cursor < end) numbers[i++] = block.cursor++;
      if (block.cursor === block.hi) this.blocks.shift();
    }
    this.remaining -= count;
    this.counts.issued += count;
    return numbers;
  }

  /** Serves queued requests in order while the numbers in hand suffice; refills for the rest. */
  private serveWaiters(): void {
    for (let head = this.waiters[0]; head !== undefined && head.count <= this.remaining; head = this.waiters[0]) {
      this.waiters.shift();
      const waited = this.options.clock.now() - head.since;
      this.counts.boundaryWaits++;
      this.counts.longestBoundaryWaitMs = Math.max(this.counts.longestBoundaryWaitMs, waited);
      head.resolve(this.issue(head.count));
    }
    if (this.waiters.length === 0) {
      this.maybePrefetch();
    } else if (this.refill === undefined && this.closing === undefined) {
      const wanted = this.waiters.reduce((sum, w) => sum + w.count, 0);
      this.startRefill(wanted - this.remaining);
    }
  }

  private maybePrefetch(): void {
    if (this.refill !== undefined || this.closing !== undefined || this.prefetchAt <= 0) return;
    if (this.remaining <= this.prefetchAt * this.newestBlockSize) this.startRefill(0);
  }

  private startRefill(shortfall: number): void {
    const proposed = this.sizer.propose();
    // Waiters needing more than the policy's size get it in one refill rather than several.
    this.refill = this.runRefill(proposed, clampBlockSize(Math.max(proposed, shortfall), this.bounds));
  }

  /** Never rejects: a failure is handed to the requests waiting for this refill. */
  private async runRefill(proposed: number, size: number): Promise<void> {
    const started = this.options.clock.now();
    const racesBefore = this.counts.retries412;
    const remainingBefore = this.remaining;
    let block: NumberRange;
    try {
      block = await this.reserve(size);
    } catch (err) {
      this.refill = undefined;
      this.options.onReservation?.(this.options.clock.now() - started, false);
      this.refillFailed(err);
      return;
    }
    this.refill = undefined;
    this.options.onReservation?.(this.options.clock.now() - started, true);
    this.sizer.record(proposed, started);
    this.blocks.push({ lo: block.lo, cursor: block.lo, hi: block.hi });
    this.remaining += block.hi - block.lo;
    this.newestBlockSize = block.hi - block.lo;
    this.counts.refills++;
    this.lastRefillAt = started;
    this.options.logger.log('info', 'sequence.block_reserved', {
      sequence: this.name,
      lo: block.lo,
      hi: block.hi,
      size: block.hi - block.lo,
      remainingBefore,
      waiting: this.waiters.length,
      lostRaces: this.counts.retries412 - racesBefore,
      ms: this.options.clock.now() - started,
    });
    if (this.closing === undefined) this.serveWaiters();
  }

  private refillFailed(err: unknown): void {
    this.counts.refillFailures++;
    const code = isAppError(err) ? err.code : 'Internal';
    if (code === 'ConcurrencyExhausted') this.counts.retriesExhausted++;
    this.options.logger.log('warn', 'sequence.refill_failed', {
      sequence: this.name,
      code,
      error: err instanceof Error ? err.message : String(err),
      waiting: this.waiters.length,
      remaining: this.remaining,
    });
    // Everyone waiting gets the answer now rather than queueing for a storage that is failing;
    // the numbers in hand stay in hand. No retry from here: the next request starts the next refill.
    for (const waiter of this.waiters.splice(0)) waiter.reject(err);
  }

  private async read(): Promise<StoredSequence> {
    const sequence = await this.options.store.read(this.name);
    if (sequence === undefined) throw new AppError('NotFound', `Sequence ${this.name} no longer exists`);
    this.state = sequence;
    return sequence;
  }

  /** The entity to write against: the one we last wrote if still trusted, else a fresh read. */
  private async current(attempt: number): Promise<StoredSequence> {
    const known = this.state;
    return attempt === 0 && known !== undefined && this.pending === undefined ? known : this.read();
  }

  /** Moves the high-water mark to `hi` with our token; on failure the outcome is unknown until re-read. */
  private async write(current: StoredSequence, hi: number): Promise<void> {
    const token = `${this.options.instanceId}:${++this.writeCount}`;
    this.pending = { token, lo: current.next, hi };
    try {
      this.state = await this.options.store.setNext(current, hi, token);
    } catch (err) {
      this.state = undefined;
      throw err;
    }
    this.pending = undefined;
  }

  /**
   * Whether a write we never heard back from landed: if the entity still carries its token, it did
   * and nobody has written since. Otherwise it did not land, or (rarely) it landed and was overtaken
   * — then those numbers are a gap.
   */
  private recoverPending(current: StoredSequence): NumberRange | undefined {
    const pending = this.pending;
    if (pending === undefined) return undefined;
    this.pending = undefined;
    if (current.lastWrite !== pending.token) return undefined;
    this.counts.recoveredWrites++;
    this.options.logger.log('info', 'sequence.write_recovered', { sequence: this.name, lo: pending.lo, hi: pending.hi });
    return { lo: pending.lo, hi: pending.hi };
  }

  private reserve(size: number): Promise<NumberRange> {
    return retryLostRaces(this.retry, async (attempt) => {
      const current = await this.current(attempt);
      const recovered = this.recoverPending(current);
      if (recovered !== undefined) return recovered;
      if (current.next > maxSequenceValue) {
        throw new AppError('Conflict', `Sequence ${this.name} is exhausted: it has issued every number up to ${maxSequenceValue}`);
      }
      const lo = current.next;
      const hi = Math.min(lo + size, maxSequenceValue + 1);
      await this.write(current, hi);
      return { lo, hi };
    });
  }

  private async shutdown(): Promise<CloseReport> {
    await this.refill;
    // Requests that the last block can serve get it; the rest are told to go elsewhere.
    this.serveWaiters();
    for (const waiter of this.waiters.splice(0)) waiter.reject(this.shuttingDown());
    if (this.pending !== undefined) {
      try {
        const recovered = this.recoverPending(await this.read());
        if (recovered !== undefined) this.blocks.push({ lo: recovered.lo, cursor: recovered.lo, hi: recovered.hi });
      } catch {
        // Unknown outcome and storage unreachable: nothing more can be learned here.
      }
    }
    const unused = this.blocks.filter((b) => b.cursor < b.hi).map((b) => ({ lo: b.cursor, hi: b.hi }));
    this.blocks.length = 0;
    this.remaining = 0;
    // Only the run of unused numbers that ends at our newest block's end can go back: it is the
    // part directly below the stored high-water mark.
    let first = unused.length - 1;
    while (first > 0 && unused[first - 1]?.hi === unused[first]?.lo) first--;
    const tail = first >= 0 ? { lo: unused[first]?.lo ?? 0, hi: unused[unused.length - 1]?.hi ?? 0 } : undefined;
    const abandoned = unused.slice(0, Math.max(first, 0));
    let returned: NumberRange | undefined;
    if (tail !== undefined) {
      if (await this.returnTail(tail)) returned = tail;
      else abandoned.push(tail);
    }
    if (abandoned.length > 0) {
      this.options.logger.log('warn', 'sequence.gap', {
        sequence: this.name,
        reason: 'unused numbers could not be returned: another instance reserved after them',
        ranges: abandoned,
        count: abandoned.reduce((sum, r) => sum + r.hi - r.lo, 0),
      });
    }
    return { returned, abandoned };
  }

  private async returnTail(tail: NumberRange): Promise<boolean> {
    try {
      const done = await retryLostRaces(this.retry, async (attempt) => {
        const current = await this.current(attempt);
        // Our own write landed although its response was lost (the SDK's retry then saw a 412).
        if (this.pending !== undefined && current.lastWrite === this.pending.token) return true;
        if (current.next !== tail.hi) return false;
        await this.write(current, tail.lo);
        return true;
      });
      this.pending = undefined;
      if (done) this.options.logger.log('info', 'sequence.tail_returned', { sequence: this.name, ...tail, count: tail.hi - tail.lo });
      return done;
    } catch (err) {
      this.options.logger.log('warn', 'sequence.tail_return_failed', {
        sequence: this.name,
        ...tail,
        error: err instanceof Error ? err.message : String(err),
      });
      return false;
    }
  }

  private shuttingDown(): AppError {
    return new AppError('DependencyUnavailable', `This instance is shutting down; retry sequence ${this.name}`, {
      retryAfterSeconds: 1,
    });
  }
}
