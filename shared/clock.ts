/**
 * Time, injected. Back-off, block sizing, batching windows and rollups read time through a Clock so
 * tests advance time instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` of this clock's time; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The abort reason as an Error (AbortSignal.reason is `any`). */
function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException('The operation was aborted', 'AbortError');
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(abortReason(signal));
        return;
      }
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(abortReason(signal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

interface Sleeper {
  readonly at: number;
  readonly resolve: () => void;
}

/** A clock that moves only when told to. Sleepers wake in time order as time passes them. */
export class ManualClock implements Clock {
  private current: number;
  private sleepers: Sleeper[] = [];

  constructor(start: number | Date = Date.UTC(2026, 0, 1)) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    if (ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        reject(abortReason(signal));
      };
      // A loop that sleeps on one long-lived signal must not pile up a listener per sleep.
      const sleeper: Sleeper = {
        at: this.current + ms,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.sleepers.push(sleeper);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Number of pending sleeps, so a test can wait until the code under test is parked. */
  get pendingSleeps(): number {
    return this.sleepers.length;
  }

  /** Moves time forward, waking every sleeper whose time has come (in order). */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      this.sleepers.sort((a, b) => a.at - b.at);
      const next = this.sleepers[0];
      if (next === undefined || next.at > target) break;
      this.sleepers.shift();
      this.current = Math.max(this.current, next.at);
      next.resolve();
      // Let the woken code run (and perhaps sleep again) before looking at the queue once more.
      await flushMicrotasks();
    }
    this.current = target;
    await flushMicrotasks();
  }

  set(time: number | Date): void {
    this.current = typeof time === 'number' ? time : time.getTime();
  }
}

async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/** A source of uniform numbers in [0, 1); injected where jitter must be reproducible in tests. */
export type Random = () => number;

/** Mulberry32: a small seeded generator, good enough for reproducible jitter in tests. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
