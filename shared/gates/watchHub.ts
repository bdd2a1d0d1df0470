/**
 * One watcher per gate per process for the long-poll and SSE clients. While at least one client
 * waits on a gate, the hub reads the gate's state every `intervalMs` — one read per gate per interval
 * however many clients wait — and hands every change to all of them. A release carried out in this
 * process (the release call, or an activity announcing it) is published to the hub directly, so its
 * clients hear of it without waiting for the next read. Clients on other instances hear of it on
 * their instance's next read, so a release reaches every long-poll and SSE client within one interval.
 *
 * Concurrent reads of one gate are coalesced (single flight), and a snapshot younger than the
 * interval is reused, so a thousand clients connecting at once cost one read, not a thousand.
 */
import { type Clock } from '../clock';
import type { Logger } from '../log';
import { gateEtag } from './etag';
import type { GateSnapshot } from './operations';

export type GateReader = (gate: string) => Promise<GateSnapshot | undefined>;

export interface Observed {
  /** Undefined while the gate does not exist. */
  readonly gate: GateSnapshot | undefined;
  readonly etag: string | undefined;
  /** When it was read or published, on the hub's clock. */
  readonly at: number;
}

export type GateListener = (observed: Observed) => void;

interface Watched {
  readonly listeners: Set<GateListener>;
  latest: Observed | undefined;
  reading: Promise<Observed> | undefined;
  loop: AbortController | undefined;
}

export interface WatchHubOptions {
  readonly intervalMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

function rank(gate: GateSnapshot | undefined): number {
  return gate === undefined ? -1 : gate.generation * 2 + (gate.state === 'released' ? 1 : 0);
}

export class GateWatchHub {
  private readonly watched = new Map<string, Watched>();
  private readonly closer = new AbortController();
  /** Aborted when the hub closes (the host is stopping): open long polls answer, event streams end. */
  readonly closing: AbortSignal = this.closer.signal;
  /** State reads issued (for the benchmark's transaction counts). */
  reads = 0;

  constructor(
    private readonly read: GateReader,
    private readonly options: WatchHubOptions,
  ) {}

  /** Gates being watched and the clients waiting on them. */
  stats(): { gates: number; listeners: number; reads: number } {
    let listeners = 0;
    for (const w of this.watched.values()) listeners += w.listeners.size;
    return { gates: this.watched.size, listeners, reads: this.reads };
  }

  /**
   * Adds a listener for changes of `gate` and starts the gate's watcher if it is the first. Returns
   * the unsubscribe function; the watcher stops with the last listener.
   */
  subscribe(gate: string, listener: GateListener): () => void {
    const w = this.entry(gate);
    w.listeners.add(listener);
    if (w.loop === undefined && !this.closing.aborted) this.startLoop(gate, w);
    return () => {
      w.listeners.delete(listener);
      if (w.listeners.size === 0) {
        w.loop?.abort();
        w.loop = undefined;
        this.forgetIfUnused(gate, w);
      }
    };
  }

  /**
   * The gate's current state: a snapshot younger than one interval when a watcher has one, else a
   * read (joined with any read already under way).
   */
  async current(gate: string): Promise<Observed> {
    const w = this.entry(gate);
    const latest = w.latest;
    if (latest !== undefined && w.loop !== undefined && this.options.clock.now() - latest.at < this.options.intervalMs) return latest;
    try {
      return await this.readOnce(gate, w);
    } finally {
      this.forgetIfUnused(gate, w);
    }
  }

  /** Stops every watcher and tells the waiting clients to finish (graceful shutdown). */
  close(): void {
    this.closer.abort(new Error('The gate watch hub is closing'));
    for (const [gate, w] of this.watched) {
      w.loop?.abort();
      w.loop = undefined;
      w.listeners.clear();
      this.forgetIfUnused(gate, w);
    }
  }

  /** A state learned in this process (a release or reset done here): delivered at once. */
  publish(gate: GateSnapshot): void {
    const w = this.watched.get(gate.name);
    if (w === undefined) return;
    this.offer(w, { gate, etag: gateEtag(gate), at: this.options.clock.now() });
  }

  private entry(gate: string): Watched {
    let w = this.watched.get(gate);
    if (w === undefined) {
      w = { listeners: new Set(), latest: undefined, reading: undefined, loop: undefined };
      this.watched.set(gate, w);
    }
    return w;
  }

  private forgetIfUnused(gate: string, w: Watched): void {
    if (w.listeners.size === 0 && w.loop === undefined && w.reading === undefined && this.watched.get(gate) === w)
      this.watched.delete(gate);
  }

  private readOnce(gate: string, w: Watched): Promise<Observed> {
    w.reading ??= (async () => {
      try {
        this.reads++;
        const snapshot = await this.read(gate);
        const observed: Observed = {
          gate: snapshot,
          etag: snapshot === undefined ? undefined : gateEtag(snapshot),
          at: this.options.clock.now(),
        };
        return this.offer(w, observed);
      } finally {
        w.reading = undefined;
      }
    })();
    return w.reading;
  }

  /** Keeps the newest state and tells the listeners of a change. A read never moves a gate backwards. */
  private offer(w: Watched, observed: Observed): Observed {
    const latest = w.latest;
    if (latest !== undefined && rank(observed.gate) < rank(latest.gate)) return latest;
    w.latest = observed;
    if (latest?.etag !== observed.etag) for (const listener of [...w.listeners]) listener(observed);
    return observed;
  }

  private startLoop(gate: string, w: Watched): void {
    const loop = new AbortController();
    w.loop = loop;
    const { clock, intervalMs, logger } = this.options;
    void (async () => {
      let failures = 0;
      while (!loop.signal.aborted) {
        try {
          await clock.sleep(intervalMs * 2 ** Math.min(failures, 5), loop.signal);
        } catch {
          break;
        }
        try {
          await this.readOnce(gate, w);
          failures = 0;
        } catch (err) {
          failures++;
          logger.log('warn', 'gates.watch.readFailed', { gate, failures, error: err });
        }
      }
      this.forgetIfUnused(gate, w);
    })();
  }
}
