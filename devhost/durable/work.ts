/**
 * The engine's units of work and how they are paced: keyed work (one episode per orchestration, one
 * batch per entity at a time; marking a key ready while it runs queues exactly one more run, which
 * then takes everything that arrived meanwhile) and a plain limiter for activities. Both report how
 * much is queued or running, which is what `idle()` means.
 */

export type WorkErrorHandler = (key: string, error: unknown) => void;

export class KeyedWork {
  private readonly ready = new Set<string>();
  private readonly running = new Set<string>();
  private readonly again = new Set<string>();
  private active = 0;

  constructor(
    private readonly concurrency: number,
    private readonly work: (key: string) => Promise<void>,
    private readonly onError: WorkErrorHandler,
  ) {}

  /** Asks for one more run for `key` (coalesced with any run already waiting). */
  mark(key: string): void {
    if (this.running.has(key)) {
      this.again.add(key);
      return;
    }
    this.ready.add(key);
    this.pump();
  }

  get busy(): number {
    return this.ready.size + this.running.size;
  }

  private pump(): void {
    while (this.active < this.concurrency && this.ready.size > 0) {
      const key = this.ready.values().next().value as string;
      this.ready.delete(key);
      this.running.add(key);
      this.active++;
      void this.work(key)
        .catch((err: unknown) => this.onError(key, err))
        .finally(() => {
          this.running.delete(key);
          this.active--;
          if (this.again.delete(key)) this.ready.add(key);
          this.pump();
        });
    }
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
