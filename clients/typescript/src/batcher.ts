/**
 * Group commit for calls that can share one request (counter increments, stream appends), in the
 * Kafka producer's model:
 * - linger: a batch waits `lingerMs` after its first item for more to join it; with 0 it waits only
 *   for the end of the current turn of the event loop (setImmediate), so calls made together share it;
 * - batch size: a batch holds up to `maxSize` (an item larger than that goes alone) and is ready to
 *   go as soon as it is full, or as soon as a batch after it opens;
 * - in flight: up to `maxInFlight` batches are out at once; a ready batch waiting for a free slot
 *   keeps taking items while it has room, so under load each request carries what arrived meanwhile;
 * - order: batches leave in the order they opened, never a later one before an earlier one.
 * Under a steady load of λ items per second a batch carries about λ × lingerMs items, whatever the
 * round trip (Kafka's linger.ms and batch.size; `npm run bench -- client` measures it).
 *
 * A call whose `abortSignal` aborts is detached: its promise rejects with the abort reason at once.
 * Before its batch is sent, its item is taken out (it never reaches the server); once the batch is in
 * flight the request goes on for the others, and the item may or may not have landed. A batch that
 * fails rejects exactly its own callers. `flushNow` makes every waiting batch ready (Kafka's flush).
 */
import { abortReason } from './clock.js';

/** setImmediate where there is one (Node): it runs after every continuation of this turn; else a 0 ms timer. */
function endOfTurn(run: () => void): void {
  const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate;
  if (immediate === undefined) setTimeout(run, 0);
  else immediate(run);
}

export interface BatchPolicy<I, R> {
  /** Batches sent at once; they still leave in order. */
  readonly maxInFlight: number;
  /** How long a batch waits for more items after its first (ms); 0: until the end of the turn. */
  readonly lingerMs: number;
  /** Waits `ms` (the transport's clock, so tests move time instead of sleeping). */
  readonly sleep: (ms: number) => Promise<void>;
  /** Items of different kinds (e.g. another ack mode) never share a batch. */
  readonly kind?: (item: I) => string;
  /** An item's share of the batch bound (e.g. its events); a lone item is sent whatever its size. */
  readonly size: (item: I) => number;
  readonly maxSize: number;
  /** Sends one batch; resolves with one result per item, in the same order. */
  readonly send: (items: readonly I[]) => Promise<readonly R[]>;
  /**
   * Whether the next batch (of this size) may go now, beyond the slots in flight (e.g. a bound on
   * what is out unanswered); asked again each time a request returns. Default: yes.
   */
  readonly admits?: (size: number) => boolean;
  /** Called each time nothing is left waiting or in flight (e.g. to forget an idle counter). */
  readonly onIdle?: () => void;
}

interface Entry<I, R> {
  readonly item: I;
  readonly resolve: (result: R) => void;
  readonly reject: (err: unknown) => void;
  /** Stops listening to the caller's signal. */
  release: () => void;
  detached: boolean;
}

interface Batch<I, R> {
  readonly kind: string;
  readonly entries: Entry<I, R>[];
  size: number;
  /** Lingered, full, or followed by another batch: it goes as soon as it is first and a slot is free. */
  ready: boolean;
}

export class Batcher<I, R> {
  private readonly waiting: Batch<I, R>[] = [];
  private inFlight = 0;
  private pumping = false;
  private idleWaiters: (() => void)[] = [];
  private batches = 0;

  constructor(private readonly policy: BatchPolicy<I, R>) {}

  /** Requests sent so far (each batch is one, whatever its transport retries). */
  get sent(): number {
    return this.batches;
  }

  get idle(): boolean {
    return this.inFlight === 0 && this.waiting.length === 0;
  }

  add(item: I, abortSignal?: AbortSignal): Promise<R> {
    if (abortSignal?.aborted === true) return Promise.reject(abortReason(abortSignal));
    return new Promise<R>((resolve, reject) => {
      const entry: Entry<I, R> = { item, resolve, reject, release: () => undefined, detached: false };
      const batch = this.batchFor(item);
      batch.entries.push(entry);
      batch.size += this.policy.size(item);
      if (batch.size >= this.policy.maxSize) this.ready(batch);
      if (abortSignal !== undefined) {
        const onAbort = (): void => {
          this.detach(batch, entry);
          reject(abortReason(abortSignal));
        };
        abortSignal.addEventListener('abort', onAbort, { once: true });
        entry.release = () => abortSignal.removeEventListener('abort', onAbort);
      }
    });
  }

  /** Makes every waiting batch ready to go, without waiting out its linger. */
  flushNow(): void {
    for (const batch of this.waiting) this.ready(batch);
  }

  /** Resolves once nothing is waiting or in flight. */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** The newest waiting batch when the item fits in it; else a new one, which makes the one before it ready. */
  private batchFor(item: I): Batch<I, R> {
    const kind = this.policy.kind?.(item) ?? '';
    const last = this.waiting.at(-1);
    if (last !== undefined && last.kind === kind && last.size + this.policy.size(item) <= this.policy.maxSize) return last;
    if (last !== undefined) this.ready(last);
    const batch: Batch<I, R> = { kind, entries: [], size: 0, ready: false };
    this.waiting.push(batch);
    const lingered = (): void => this.ready(batch);
    if (this.policy.lingerMs <= 0) endOfTurn(lingered);
    else void this.policy.sleep(this.policy.lingerMs).then(lingered);
    return batch;
  }

  private ready(batch: Batch<I, R>): void {
    if (batch.ready) return;
    batch.ready = true;
    this.schedulePump();
  }

  private detach(batch: Batch<I, R>, entry: Entry<I, R>): void {
    entry.detached = true;
    entry.release();
    const at = this.waiting.indexOf(batch);
    if (at === -1) return; // in flight: it goes on for the others
    batch.entries.splice(batch.entries.indexOf(entry), 1);
    batch.size -= this.policy.size(entry.item);
    if (batch.entries.length === 0) {
      this.waiting.splice(at, 1);
      // A batch behind it may have been held back only by it.
      this.schedulePump();
    }
    this.notifyIfIdle();
  }

  /** Sends on a microtask, so an item added in the same synchronous run still joins a batch that just became ready. */
  private schedulePump(): void {
    if (this.pumping) return;
    this.pumping = true;
    queueMicrotask(() => {
      this.pumping = false;
      this.pump();
    });
  }

  private pump(): void {
    for (;;) {
      const next = this.waiting[0];
      if (next?.ready !== true || this.inFlight >= this.policy.maxInFlight) return;
      if (this.inFlight > 0 && this.policy.admits?.(next.size) === false) return;
      const batch = this.waiting.shift() as Batch<I, R>;
      this.inFlight++;
      this.batches++;
      void this.run(batch);
    }
  }

  private async run(batch: Batch<I, R>): Promise<void> {
    try {
      const results = await this.policy.send(batch.entries.map((e) => e.item));
      batch.entries.forEach((e, i) => {
        if (!e.detached) e.resolve(results[i] as R);
      });
    } catch (err) {
      for (const e of batch.entries) if (!e.detached) e.reject(err);
    } finally {
      for (const e of batch.entries) e.release();
      this.inFlight--;
      this.pump();
      this.notifyIfIdle();
    }
  }

  private notifyIfIdle(): void {
    if (!this.idle) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
    this.policy.onIdle?.();
  }
}
