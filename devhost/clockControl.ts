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
import { DevhostError } from './errors';

export interface Idler {
  readonly name?: string;
  idle?(): boolean;
}

const maxSteps = 100_000;
const slowMs = 10_000;

function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class ClockControl {
  constructor(
    private readonly clock: HostClock,
    private readonly invoker: Invoker,
    private readonly idlers: () => readonly Idler[],
    private readonly warn: (line: string) => void = () => undefined,
    private readonly timeoutMs = 60_000,
  ) {}

  private busyIdlers(): string[] {
    return this.idlers()
      .filter((i) => i.idle !== undefined && !i.idle())
      .map((i) => i.name ?? 'an extension');
  }

  private quiet(): boolean {
    return this.invoker.backgroundCount() === 0 && this.busyIdlers().length === 0;
  }

  /** What keeps the host from settling, for the timeout's message: the functions running and the busy extensions. */
  private busy(): string {
    const running = new Map<string, number>();
    for (const name of this.invoker.background()) running.set(name, (running.get(name) ?? 0) + 1);
    const invocations = [...running].map(([name, n]) => `${name} ×${n}`).join(', ') || 'none';
    const extensions = this.busyIdlers().join(', ') || 'none';
    return `background invocations: ${invocations}; busy extensions: ${extensions}`;
  }

  /**
   * Waits until the host is quiet twice in a row, a macrotask apart (work may be queued between).
   * A settle slower than `slowMs` is reported once, with what keeps it busy, so a test that times
   * out on a slow advance leaves its cause in the host's output.
   */
  async settle(what = 'settle'): Promise<void> {
    const started = Date.now();
    const deadline = started + this.timeoutMs;
    let reported = false;
    let calm = 0;
    while (calm < 2) {
      if (Date.now() > deadline)
        throw new DevhostError('SettleTimeout', `The host did not ${what} within ${this.timeoutMs} ms (${this.busy()})`);
      if (!reported && Date.now() - started > slowMs) {
        reported = true;
        this.warn(`Clock: still waiting to ${what} after ${slowMs} ms (${this.busy()})`);
      }
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
    const settle = (): Promise<void> =>
      this.settle(`settle on the way to ${new Date(target).toISOString()} (at ${new Date(clock.now()).toISOString()}, step ${steps})`);
    await settle();
    for (;;) {
      const due = clock.nextDue();
      if (due === undefined || due > target) break;
      clock.advanceTo(Math.max(due, clock.now()));
      if (++steps > maxSteps)
        throw new DevhostError(
          'SettleTimeout',
          `Gave up after ${maxSteps} clock steps: something keeps scheduling work at ${new Date(clock.now()).toISOString()}`,
        );
      await settle();
    }
    clock.advanceTo(Math.max(target, clock.now()));
    await settle();
    return steps;
  }
}
