/**
 * Durable timers on the host clock. Keeps its own list so the engine can tell whether a timer is due
 * but not yet fired (a virtual-clock step is not over until it has), cancel an instance's timers and
 * show pending timers when a test dumps a stuck instance.
 */
import type { HostClock } from '../clock';

export interface PendingTimer {
  readonly instanceId: string;
  readonly timerId: number;
  readonly fireAt: number;
}

export class DurableTimers {
  private readonly pending = new Map<string, PendingTimer & { cancel: () => void }>();

  constructor(private readonly clock: HostClock) {}

  schedule(timer: PendingTimer, fire: (timer: PendingTimer) => void): void {
    const key = `${timer.instanceId}\u0000${timer.timerId}`;
    if (this.pending.has(key)) return;
    const cancel = this.clock.schedule(timer.fireAt, () => {
      if (!this.pending.delete(key)) return;
      fire(timer);
    });
    this.pending.set(key, { ...timer, cancel });
  }

  cancelInstance(instanceId: string): void {
    for (const [key, timer] of this.pending) {
      if (timer.instanceId !== instanceId) continue;
      timer.cancel();
      this.pending.delete(key);
    }
  }

  cancelAll(): void {
    for (const timer of this.pending.values()) timer.cancel();
    this.pending.clear();
  }

  /** Timers whose time has come but whose callback has not run yet. */
  dueCount(): number {
    const now = this.clock.now();
    let n = 0;
    for (const t of this.pending.values()) if (t.fireAt <= now) n++;
    return n;
  }

  forInstance(instanceId: string): PendingTimer[] {
    return [...this.pending.values()]
      .filter((t) => t.instanceId === instanceId)
      .map(({ instanceId: id, timerId, fireAt }) => ({ instanceId: id, timerId, fireAt }));
  }
}
