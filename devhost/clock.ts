/**
 * The host's time source for timer triggers and durable timers. Real by default; a virtual clock
 * (setting `DEVHOST_VIRTUAL_CLOCK=true`) only moves when told to, so tests can fast-forward hours
 * of timers without sleeping.
 */
export interface HostClock {
  readonly virtual: boolean;
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once the clock reaches `at` (at once if it already has). Returns a cancel function. */
  schedule(at: number, fn: () => void): () => void;
}

/** Node timers overflow past 2^31-1 ms (about 24.8 days); longer waits are chained. */
const maxTimeoutMs = 2_147_483_647;

export class RealClock implements HostClock {
  readonly virtual = false;

  now(): number {
    return Date.now();
  }

  schedule(at: number, fn: () => void): () => void {
    let timer: NodeJS.Timeout | undefined;
    let cancelled = false;
    const arm = (): void => {
      const wait = at - Date.now();
      if (wait <= 0) {
        timer = setTimeout(() => !cancelled && fn(), 0);
        return;
      }
      timer = setTimeout(arm, Math.min(wait, maxTimeoutMs));
    };
    arm();
    return () => {
      cancelled = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }
}

interface Pending {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

export class VirtualClock implements HostClock {
  readonly virtual = true;
  private current: number;
  private pending: Pending[] = [];
  private seq = 0;

  constructor(start: number = Date.now()) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  schedule(at: number, fn: () => void): () => void {
    const entry: Pending = { at, seq: this.seq++, fn };
    if (at <= this.current) {
      setImmediate(() => this.pending.includes(entry) && this.fire(entry));
    }
    this.pending.push(entry);
    return () => {
      this.pending = this.pending.filter((p) => p !== entry);
    };
  }

  /** The earliest scheduled time, if any. */
  nextDue(): number | undefined {
    let min: number | undefined;
    for (const p of this.pending) if (min === undefined || p.at < min) min = p.at;
    return min;
  }

  /** Moves time to `target`, firing everything due on the way, in time order. */
  advanceTo(target: number): void {
    for (;;) {
      const due = this.pending.filter((p) => p.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      this.current = Math.max(this.current, due.at);
      this.fire(due);
    }
    this.current = Math.max(this.current, target);
  }

  advance(ms: number): void {
    this.advanceTo(this.current + ms);
  }

  private fire(entry: Pending): void {
    this.pending = this.pending.filter((p) => p !== entry);
    entry.fn();
  }
}
