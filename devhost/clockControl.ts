/**
 * Moves the virtual clock the way `POST /admin/devhost/clock` promises: in steps. Each step jumps to
 * the next due time (firing everything due then), then waits until the host has settled — no
 * background invocation running and every extension and listener reporting idle — so work that a
 * step starts and that schedules more time-based work (a durable retry timer set by a timer that
 * just fired) is honoured within the same advance. HTTP invocations a client holds open (server-sent
 * events) are not waited for.
 */
import type { HostClock, VirtualClock } from './clock';
import type { Invoker } from './core/invoker';

export interface Idler {
  idle?(): boolean;
}

export class SettleTimeout extends Error {
  override name = 'SettleTimeout';
}

const maxSteps = 100_000;

function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class ClockControl {
  constructor(
    private readonly clock: HostClock,
    private readonly invoker: Invoker,
    private readonly idlers: () => readonly Idler[],
    private readonly timeoutMs = 60_000,
  ) {}

  private quiet(): boolean {
    return this.invoker.backgroundCount() === 0 && this.idlers().every((i) => i.idle === undefined || i.idle());
  }

  /** Waits until the host is quiet twice in a row, a macrotask apart (work may be queued between). */
  async settle(): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    let calm = 0;
    while (calm < 2) {
      if (Date.now() > deadline)
        throw new SettleTimeout(
          `The host did not settle within ${this.timeoutMs} ms (background invocations: ${this.invoker.backgroundCount()})`,
        );
      await this.invoker.settle(Math.max(1, deadline - Date.now()));
      await tick();
      if (this.quiet()) calm++;
      else {
        calm = 0;
        await new Promise((r) => setTimeout(r, 1));
      }
    }
  }

  /** Advances a virtual clock to `target` in steps (see above). Returns how many steps fired work. */
  async advanceTo(target: number): Promise<number> {
    if (!this.clock.virtual) throw new Error('The clock is real; start the host with DEVHOST_VIRTUAL_CLOCK=true to move it');
    const clock = this.clock as VirtualClock;
    let steps = 0;
    await this.settle();
    for (;;) {
      const due = clock.nextDue();
      if (due === undefined || due > target) break;
      clock.advanceTo(Math.max(due, clock.now()));
      if (++steps > maxSteps)
        throw new SettleTimeout(
          `Gave up after ${maxSteps} clock steps: something keeps scheduling work at ${new Date(clock.now()).toISOString()}`,
        );
      await this.settle();
    }
    clock.advanceTo(Math.max(target, clock.now()));
    await this.settle();
    return steps;
  }
}
