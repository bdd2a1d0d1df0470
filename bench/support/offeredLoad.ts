/**
 * A fixed offered load, so that a figure means the same thing on a quiet machine and a busy one:
 * operations arrive at `rate` per second on a fixed schedule (open loop: each is issued at its time
 * whether or not earlier ones have finished, as the requests reaching a busy server would), spread
 * round-robin over `producers`, for `seconds` after a warm-up. Latency is counted from each
 * operation's scheduled time, so waiting for a free connection counts too; an operation still
 * waiting for one when the window closes is shed (a load the design cannot carry shows as shed, not
 * as a queue that outlives the run). What the host paid is read from its process (CPU, /proc) and
 * from the requests counted at the client's fetch.
 */
import { performance } from 'node:perf_hooks';

import { Latency } from './report';

export interface OfferedLoad {
  /** Operations per second, all producers together. */
  readonly rate: number;
  readonly producers: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
}

export interface LoadResult {
  readonly offered: number;
  readonly done: number;
  readonly failed: number;
  /** Never sent: still waiting for a connection when the window closed. */
  readonly shed: number;
  readonly seconds: number;
  readonly requests: number;
  /** The host process's CPU (user + system) over the measured window, in ms. */
  readonly hostCpuMs: number;
  readonly latency: Latency;
}

export interface Meters {
  /** HTTP requests sent so far. */
  requests(): number;
  /** The host process's CPU so far, in ms. */
  hostCpuMs(): number;
}

/** Thrown for an operation shed by a `Pool`. */
class Shed extends Error {}

/**
 * At most `size` operations run at once, the rest wait their turn in arrival order (a connection
 * pool); `close()` sheds those still waiting.
 */
class Pool {
  private running = 0;
  private readonly queue: { go: () => void; shed: () => void }[] = [];

  constructor(private readonly size: number) {}

  async run<T>(op: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((go, shed) => this.queue.push({ go, shed: () => shed(new Shed()) }));
    this.running++;
    try {
      return await op();
    } finally {
      this.running--;
      this.queue.shift()?.go();
    }
  }

  close(): void {
    for (const waiting of this.queue.splice(0)) waiting.shed();
  }
}

async function offer(load: OfferedLoad, seconds: number, op: (producer: number) => Promise<void>, pool?: Pool, latency?: Latency) {
  const start = performance.now();
  const total = Math.round(load.rate * seconds);
  const pending: Promise<void>[] = [];
  let done = 0;
  let failed = 0;
  let shed = 0;
  for (let issued = 0; issued < total;) {
    const due = Math.min(total, Math.floor(((performance.now() - start) * load.rate) / 1000) + 1);
    for (; issued < due; issued++) {
      const scheduled = start + (issued * 1000) / load.rate;
      const producer = issued % load.producers;
      pending.push(
        (pool === undefined ? op(producer) : pool.run(() => op(producer))).then(
          () => {
            done++;
            latency?.recordMs(performance.now() - scheduled);
          },
          (err: unknown) => void (err instanceof Shed ? shed++ : failed++),
        ),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  pool?.close();
  await Promise.all(pending);
  return { offered: total, done, failed, shed };
}

/**
 * Runs the warm-up, then the measured window, then waits for every operation issued in it; with a
 * pool size, at most that many operations are out at once (each its own request).
 */
export async function runOffered(
  load: OfferedLoad,
  op: (producer: number) => Promise<void>,
  meters: Meters,
  poolSize?: number,
): Promise<LoadResult> {
  const pool = (): Pool | undefined => (poolSize === undefined ? undefined : new Pool(poolSize));
  await offer(load, load.warmupSeconds, op, pool());
  const latency = new Latency();
  const requests = meters.requests();
  const cpu = meters.hostCpuMs();
  const started = performance.now();
  const counts = await offer(load, load.seconds, op, pool(), latency);
  return {
    ...counts,
    seconds: (performance.now() - started) / 1000,
    requests: meters.requests() - requests,
    hostCpuMs: meters.hostCpuMs() - cpu,
    latency,
  };
}
