/**
 * Group commit for calls that can share one request (counter increments, stream appends). Calls
 * join the newest batch not yet sent while it has room; up to `maxInFlight` batches are sent at
 * once, and a batch waiting for a free slot keeps growing until one frees, so under load each
 * request carries everything that arrived during the previous round trip.
 *
 * Sending waits for the end of the current turn of the event loop (setImmediate, or a zero-delay timer), so callers
 * that resume together — e.g. every caller of the batch that just returned — share one request
 * instead of the first taking a free slot alone. `npm run bench -- client` measured this against
 * sending at once (see docs/client-typescript.md).
 *
 * A call whose `abortSignal` aborts is detached: its promise rejects with the abort reason at once.
 * Before its batch is sent, its item is taken out (it never reaches the server); once the batch is in
 * flight the request goes on for the others, and the item may or may not have landed. A batch that
 * fails rejects exactly its own callers.
 */
import { abortReason } from './clock.js';

/** setImmediate where there is one (Node): it runs after every continuation of this turn; else a 0 ms timer. */
function endOfTurn(run: () => void): void {
  const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate;
  if (immediate === undefined) setTimeout(run, 0);
  else immediate(run);
}

interface BatchPolicy<I, R> {
  /** Batches sent at once; 1 keeps requests in call order (as a stream's seqs need). */
  readonly maxInFlight: number;
  /** Items of different kinds (e.g. another ack mode) never share a batch. */
  readonly kind?: (item: I) => string;
  /** An item's share of the batch bound (e.g. its events); a lone item is sent whatever its size. */
  readonly size: (item: I) => number;
  readonly maxSize: number;
  /** Sends one batch; resolves with one result per item, in the same order. */
  readonly send: (items: readonly I[]) => Promise<readonly R[]>;
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
}

export class Batcher<I, R> {
  private readonly waiting: Batch<I, R>[] = [];
  private inFlight = 0;
  private scheduled = false;
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
      if (abortSignal !== undefined) {
        const onAbort = (): void => {
          this.detach(batch, entry);
          reject(abortReason(abortSignal));
        };
        abortSignal.addEventListener('abort', onAbort, { once: true });
        entry.release = () => abortSignal.removeEventListener('abort', onAbort);
      }
      this.schedule();
    });
  }

  /** Resolves once nothing is waiting or in flight. */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private batchFor(item: I): Batch<I, R> {
    const kind = this.policy.kind?.(item) ?? '';
    const last = this.waiting.at(-1);
    if (last !== undefined && last.kind === kind && last.size + this.policy.size(item) <= this.policy.maxSize) return last;
    const batch: Batch<I, R> = { kind, entries: [], size: 0 };
    this.waiting.push(batch);
    return batch;
  }

  private detach(batch: Batch<I, R>, entry: Entry<I, R>): void {
    entry.detached = true;
    entry.release();
    const at = this.waiting.indexOf(batch);
    if (at === -1) return; // in flight: it goes on for the others
    batch.entries.splice(batch.entries.indexOf(entry), 1);
    batch.size -= this.policy.size(entry.item);
    if (batch.entries.length === 0) this.waiting.splice(at, 1);
    this.notifyIfIdle();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    endOfTurn(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.policy.maxInFlight) {
      const batch = this.waiting.shift();
      if (batch === undefined) return;
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
