/** A clock whose time moves only when the test says so; records every sleep it was asked for. */
import type { Clock } from '../../src/clock';

interface Timer {
  readonly at: number;
  readonly resolve: () => void;
}

export class FakeClock implements Clock {
  private time = 0;
  private readonly timers = new Set<Timer>();
  /** Every sleep requested, in order (ms). */
  readonly sleeps: number[] = [];

  now(): number {
    return this.time;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    return new Promise<void>((resolve, reject) => {
      const fail = (): void => reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      if (signal?.aborted === true) {
        fail();
        return;
      }
      const timer: Timer = {
        at: this.time + Math.max(0, ms),
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        this.timers.delete(timer);
        fail();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.timers.add(timer);
    });
  }

  /** Sleeps that are waiting now, as remaining milliseconds. */
  pending(): number[] {
    return [...this.timers].map((t) => t.at - this.time).sort((a, b) => a - b);
  }

  /** Moves time forward, firing due timers in order and letting their continuations run. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      await settle();
      const due = [...this.timers].filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.timers.delete(due);
      this.time = Math.max(this.time, due.at);
      due.resolve();
    }
    this.time = end;
    await settle();
  }
}

/** Lets pending promise continuations (and fetch fakes' resolutions) run. */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}
