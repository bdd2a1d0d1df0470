/**
 * `generator.NextId()` against the HTTP API: numbers are handed out from a block this client reserved
 * with one `POST /sequences/{name}/next` of `count: N`, so most calls never leave the process.
 *
 * - N adapts like the server's block policy: aim for one reservation per `refillTargetMs`; double
 *   when a block lasted less than half of it, halve when it lasted more than twice, within bounds.
 * - The next block is reserved when 10% or less of the current one is left, so callers rarely wait
 *   at a boundary. At most one reservation is in flight; everyone short of numbers joins it.
 * - Memory is bounded: the unissued numbers of at most two blocks (≤ 2 × maxBlock strings).
 * - Each reservation carries its own Idempotency-Key, reused by every retry of that reservation, so
 *   a response lost on the way back yields the same numbers on the retry instead of a gap.
 * - Reserved numbers never issued (the process ends) are gaps, exactly as with the server's own
 *   blocks after a crash; numbers are unique, increasing per client, not globally ordered.
 */
import { validateFormatted, type Validation } from './damm.js';
import { newIdempotencyKey } from './ids.js';
import type { OperationOptions } from './options.js';
import { throwIfAborted, untilAborted } from './signals.js';
import { segment, type Transport } from './transport.js';
import type { SequenceNumbers, SequenceView } from './types.js';

/** The server takes at most this many numbers per request. */
export const maxReservation = 1000;

export interface SequenceOptions {
  /** First block size (default 10). */
  readonly initialBlock?: number;
  readonly minBlock?: number;
  /** At most 1000, the server's limit per request (default 1000). */
  readonly maxBlock?: number;
  /** How long one block should last (default 10 s, as the .NET client and the server's own block policy). */
  readonly refillTargetMs?: number;
  /** Reserve the next block when this fraction of the current one is left (default 0.1; 0: never ahead of need). */
  readonly prefetchAt?: number;
}

export interface SequenceStats {
  readonly blockSize: number;
  readonly remaining: number;
  readonly reservations: number;
  readonly issued: number;
  readonly reserving: boolean;
}

interface Block {
  readonly formatted: readonly string[];
  pos: number;
}

export class Sequence {
  private readonly blocks: Block[] = [];
  private reserving: Promise<void> | undefined;
  private lastFailure: unknown;
  private blockSize: number;
  private readonly minBlock: number;
  private readonly maxBlock: number;
  private readonly targetMs: number;
  private readonly prefetchAt: number;
  private lastReservationAt: number | undefined;
  private reservations = 0;
  private issued = 0;
  private format: Promise<SequenceView['settings']> | undefined;

  constructor(
    private readonly transport: Transport,
    readonly name: string,
    options: SequenceOptions = {},
  ) {
    this.maxBlock = clamp(options.maxBlock ?? maxReservation, 1, maxReservation);
    this.minBlock = clamp(options.minBlock ?? 1, 1, this.maxBlock);
    this.blockSize = clamp(options.initialBlock ?? 10, this.minBlock, this.maxBlock);
    this.targetMs = options.refillTargetMs ?? 10_000;
    this.prefetchAt = options.prefetchAt ?? 0.1;
  }

  /**
   * The next number, formatted (e.g. `ORD-0012345-9`). An abort while it waits for a reservation
   * rejects at once; the reservation goes on for the other callers.
   */
  next(options?: OperationOptions): Promise<string>;
  /**
   * The next `count` numbers, in increasing order (not necessarily consecutive). Numbers an aborted
   * call had already taken are not issued (gaps, as after a crash).
   */
  next(count: number, options?: OperationOptions): Promise<string[]>;
  async next(countOrOptions?: number | OperationOptions, maybeOptions: OperationOptions = {}): Promise<string | string[]> {
    const count = typeof countOrOptions === 'number' ? countOrOptions : undefined;
    const signal = (typeof countOrOptions === 'object' ? countOrOptions : maybeOptions).abortSignal;
    const wanted = count ?? 1;
    if (!Number.isInteger(wanted) || wanted < 1) throw new RangeError('count must be a positive integer');
    throwIfAborted(signal);
    const out: string[] = [];
    while (out.length < wanted) {
      const taken = this.take(wanted - out.length);
      for (const n of taken) out.push(n);
      if (out.length < wanted) await untilAborted(this.reserve(), signal);
    }
    this.issued += wanted;
    this.prefetchIfLow();
    return count === undefined ? (out[0] as string) : out;
  }

  /** Checks a typed-in number locally (prefix, digits, Damm check digit) with the server's format. */
  async validate(formatted: string, options: OperationOptions = {}): Promise<Validation> {
    // The format is read once for every caller, so one caller's abort must not fail it for the rest.
    const format = (this.format ??= this.describe().then((view) => view.settings));
    format.catch(() => {
      if (this.format === format) this.format = undefined;
    });
    return validateFormatted(await untilAborted(format, options.abortSignal), formatted);
  }

  /** The sequence as the server sees it (settings, high-water mark). */
  async describe(options: OperationOptions = {}): Promise<SequenceView> {
    const answer = await this.transport.json<SequenceView>({
      method: 'GET',
      path: `sequences/${segment(this.name)}`,
      signal: options.abortSignal,
    });
    return answer.body;
  }

  stats(): SequenceStats {
    return {
      blockSize: this.blockSize,
      remaining: this.remaining(),
      reservations: this.reservations,
      issued: this.issued,
      reserving: this.reserving !== undefined,
    };
  }

  private remaining(): number {
    return this.blocks.reduce((sum, b) => sum + b.formatted.length - b.pos, 0);
  }

  private take(count: number): string[] {
    const out: string[] = [];
    while (out.length < count) {
      const block = this.blocks[0];
      if (block === undefined) break;
      const end = Math.min(block.formatted.length, block.pos + count - out.length);
      for (let i = block.pos; i < end; i++) out.push(block.formatted[i] as string);
      block.pos = end;
      if (block.pos >= block.formatted.length) this.blocks.shift();
    }
    return out;
  }

  private prefetchIfLow(): void {
    if (this.prefetchAt <= 0 || this.reserving !== undefined || this.blocks.length > 1) return;
    if (this.remaining() > this.blockSize * this.prefetchAt) return;
    // Errors surface to whoever next needs numbers (reserve() rethrows the last failure then).
    this.reserve().catch(() => undefined);
  }

  /** Starts a reservation, or joins the one in flight. */
  private reserve(): Promise<void> {
    if (this.reserving !== undefined) return this.reserving;
    const count = this.nextBlockSize();
    const key = newIdempotencyKey();
    this.reserving = (async () => {
      try {
        const answer = await this.transport.json<SequenceNumbers>({
          method: 'POST',
          path: `sequences/${segment(this.name)}/next`,
          body: { count },
          idempotencyKey: key,
        });
        if (answer.body.formatted.length === 0) throw new Error(`reserved no numbers of ${this.name}`);
        this.blocks.push({ formatted: answer.body.formatted, pos: 0 });
        this.reservations++;
        this.lastFailure = undefined;
      } catch (err) {
        this.lastFailure = err;
        throw err;
      } finally {
        this.reserving = undefined;
      }
    })();
    return this.reserving;
  }

  /** Adapts the block size to how long the last block lasted, then returns it. */
  private nextBlockSize(): number {
    const now = this.transport.clock.now();
    if (this.lastReservationAt !== undefined && this.lastFailure === undefined) {
      const lasted = now - this.lastReservationAt;
      if (lasted < this.targetMs / 2) this.blockSize = Math.min(this.maxBlock, this.blockSize * 2);
      else if (lasted > this.targetMs * 2) this.blockSize = Math.max(this.minBlock, Math.floor(this.blockSize / 2));
    }
    this.lastReservationAt = now;
    return this.blockSize;
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.floor(value)));
}
