/**
 * The engine's units of work and how they are paced: keyed work (one episode per orchestration, one
 * batch per entity at a time; marking a key while it runs queues exactly one more run, which then
 * takes everything that arrived meanwhile) and a limiter for function executions. Both report how
 * much is queued or running, which is what `idle()` means.
 */

export type WorkErrorHandler = (key: string, error: unknown) => void;

export class KeyedWork {
  private readonly running = new Set<string>();
  private readonly again = new Set<string>();

  constructor(
    private readonly work: (key: string) => Promise<void>,
    private readonly onError: WorkErrorHandler,
  ) {}

  /** Asks for one more run for `key` (coalesced with any run already waiting). */
  mark(key: string): void {
    if (this.running.has(key)) {
      this.again.add(key);
      return;
    }
    this.running.add(key);
    void this.work(key)
      .catch((err: unknown) => this.onError(key, err))
      .finally(() => {
        this.running.delete(key);
        if (this.again.delete(key)) this.mark(key);
      });
  }

  get busy(): number {
    return this.running.size;
  }
}

export class Limiter {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly concurrency: number) {}

  get busy(): number {
    return this.active + this.queue.length;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.queue.shift();
      if (next !== undefined) next();
      else this.active--;
    }
  }
}
