/**
 * Tasks under way, for a loop that starts them and waits for room. `Promise.race` over the tasks does
 * the same job at a price that grows with them: each wait adds a reaction to every task still under
 * way, kept until that task settles, so a fan-out of 1,000 sends 128 at a time piles up about 128,000
 * reactions, each run as a microtask when its send ends (10,000 sends: 1.28 million; `npm run bench --
 * inflight`: 491 ms of CPU against 13 ms this way). Here a settling task wakes only the waits that are
 * open, once.
 */
/** A caller of `next` waiting for the next task to end. */
interface Wait {
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

export class InFlight {
  private readonly tasks = new Set<Promise<unknown>>();
  private waits: Wait[] = [];
  private failure: { readonly err: unknown } | undefined;

  get size(): number {
    return this.tasks.size;
  }

  /** Adds a started task; a rejection is kept for `next` and `settled` (it is never left unhandled). */
  add(task: Promise<unknown>): void {
    this.tasks.add(task);
    task.then(
      () => this.ended(task, (wait) => wait.resolve()),
      (err: unknown) => {
        this.failure ??= { err };
        this.ended(task, (wait) => wait.reject(err));
      },
    );
  }

  /** Settles as the next task to end does (resolves at once when none is under way), as `Promise.race` over them would. */
  next(): Promise<void> {
    if (this.tasks.size === 0) return Promise.resolve();
    return new Promise((resolve, reject) => this.waits.push({ resolve, reject }));
  }

  /** Resolves once every task added has ended; rejects with the first rejection among them. */
  async settled(): Promise<void> {
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
    if (this.failure !== undefined) throw this.failure.err;
  }

  private ended(task: Promise<unknown>, wake: (wait: Wait) => void): void {
    this.tasks.delete(task);
    const waits = this.waits;
    this.waits = [];
    for (const wait of waits) wake(wait);
  }
}
