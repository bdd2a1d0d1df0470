/**
 * Group commit: items submitted under one key are written together while earlier writes of that
 * key are in flight, so N concurrent callers cost about one write per round trip instead of N.
 *
 * - No window: an item that finds a free slot is written at once, alone. Items batch up only while
 *   `maxInFlight` writes of their key are already under way; the next free slot takes every waiting
 *   item (oldest first, at most `maxItems`).
 * - A caller's promise settles with the write that carried its item: resolved once that write
 *   succeeded, rejected with its error otherwise. Whether a failed write landed is the write
 *   function's business; the callers of a batch share its outcome, whatever it is.
 * - Writes of one key may complete out of order when `maxInFlight` > 1; keys are independent.
 */
export interface GroupCommitOptions {
  /** Writes of one key under way at once, at most (≥ 1), unless a submit says otherwise. */
  readonly maxInFlight: number;
  /** Items one write carries, at most (≥ 1). */
  readonly maxItems: number;
}

interface Waiter<T, R> {
  readonly item: T;
  readonly resolve: (result: R) => void;
  readonly reject: (err: unknown) => void;
}

interface KeyState<T, R> {
  readonly queue: Waiter<T, R>[];
  inFlight: number;
  maxInFlight: number;
}

export class GroupCommit<T, R> {
  private readonly keys = new Map<string, KeyState<T, R>>();

  constructor(
    private readonly write: (key: string, items: readonly T[]) => Promise<R>,
    private readonly options: GroupCommitOptions,
  ) {
    positive('maxInFlight', options.maxInFlight);
    positive('maxItems', options.maxItems);
  }

  /**
   * Settles when the write carrying `item` has: with its result, or its error. `maxInFlight`
   * overrides the option for this key from now on (e.g. a key's own number of partitions).
   */
  submit(key: string, item: T, maxInFlight = this.options.maxInFlight): Promise<R> {
    positive('maxInFlight', maxInFlight);
    return new Promise<R>((resolve, reject) => {
      let state = this.keys.get(key);
      if (state === undefined) {
        state = { queue: [], inFlight: 0, maxInFlight };
        this.keys.set(key, state);
      }
      state.maxInFlight = maxInFlight;
      state.queue.push({ item, resolve, reject });
      this.pump(key, state);
    });
  }

  /** Keys with items waiting or being written (idle keys are forgotten). */
  get activeKeys(): number {
    return this.keys.size;
  }

  private pump(key: string, state: KeyState<T, R>): void {
    while (state.inFlight < state.maxInFlight && state.queue.length > 0) {
      state.inFlight++;
      void this.run(key, state, state.queue.splice(0, this.options.maxItems));
    }
    if (state.inFlight === 0) this.keys.delete(key);
  }

  private async run(key: string, state: KeyState<T, R>, batch: readonly Waiter<T, R>[]): Promise<void> {
    try {
      const result = await this.write(
        key,
        batch.map((w) => w.item),
      );
      for (const waiter of batch) waiter.resolve(result);
    } catch (err) {
      for (const waiter of batch) waiter.reject(err);
    } finally {
      state.inFlight--;
      this.pump(key, state);
    }
  }
}

function positive(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, not ${value}`);
}
