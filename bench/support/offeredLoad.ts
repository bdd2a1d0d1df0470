/**
 * The two ways bench/client.ts drives a host, so that what it pays per operation means the same thing
 * on a quiet machine and a busy one:
 * - `runOffered`, a fixed offered load (open loop): operations arrive at `rate` per second on a fixed
 *   schedule, each issued at its time whether or not earlier ones have finished, as the calls reaching
 *   a client library would, spread round-robin over `producers`. Latency is counted from each
 *   operation's scheduled time. This drives the coalesced designs: how many operations share a
 *   request depends on the rate they arrive at, so the rate is fixed.
 * - `runClosed`, a fixed concurrency (closed loop): `callers` loops, each awaiting its operation before
 *   issuing the next. This drives the one-request-each baseline. It offers only what the host serves,
 *   so it is never shed and never saturates a queue: on a slower machine it does fewer operations,
 *   but each one costs the host what one request costs, which is the figure it contributes.
 * What the host paid is read from its processes (CPU, /proc), from the requests counted at the
 * client's fetch and from the storage requests counted by a proxy in front of Azurite.
 */
import { performance } from 'node:perf_hooks';

import { Latency } from './report';

export interface Window {
  readonly seconds: number;
  readonly warmupSeconds: number;
}

export interface OfferedLoad extends Window {
  /** Operations per second, all producers together. */
  readonly rate: number;
  readonly producers: number;
}

export interface LoadResult {
  /** Operations issued in the measured window (the closed loop issues only what it gets done). */
  readonly offered: number;
  readonly done: number;
  readonly failed: number;
  /** From the window's start until its last operation was answered. */
  readonly seconds: number;
  readonly requests: number;
  /** The host processes' CPU (user + system) over the window, in ms. */
  readonly hostCpuMs: number;
  /** Storage requests (Azure Storage's billed transactions) over the window. */
  readonly storage: number;
  /** Stream events the requests carried, resent ones included. */
  readonly eventsSent: number;
  readonly latency: Latency;
}

export interface Meters {
  /** HTTP requests sent so far. */
  requests(): number;
  /** The host processes' CPU so far, in ms. */
  hostCpuMs(): number;
  /** Storage requests so far. */
  storage(): number;
  /** Stream events sent so far (each time a request carried one). */
  eventsSent(): number;
}

interface Counts {
  offered: number;
  done: number;
  failed: number;
}

async function offer(load: OfferedLoad, seconds: number, op: (producer: number) => Promise<void>, latency?: Latency): Promise<Counts> {
  const start = performance.now();
  const total = Math.round(load.rate * seconds);
  const pending: Promise<void>[] = [];
  const counts: Counts = { offered: total, done: 0, failed: 0 };
  for (let issued = 0; issued < total;) {
    const due = Math.min(total, Math.floor(((performance.now() - start) * load.rate) / 1000) + 1);
    for (; issued < due; issued++) {
      const scheduled = start + (issued * 1000) / load.rate;
      pending.push(
        op(issued % load.producers).then(
          () => {
            counts.done++;
            latency?.recordMs(performance.now() - scheduled);
          },
          () => void counts.failed++,
        ),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(pending);
  return counts;
}

async function loop(callers: number, seconds: number, op: (caller: number) => Promise<void>, latency?: Latency): Promise<Counts> {
  const end = performance.now() + seconds * 1000;
  const counts: Counts = { offered: 0, done: 0, failed: 0 };
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      while (performance.now() < end) {
        counts.offered++;
        const started = performance.now();
        try {
          await op(caller);
          counts.done++;
          latency?.recordMs(performance.now() - started);
        } catch {
          counts.failed++;
        }
      }
    }),
  );
  return counts;
}

/** Runs `drive` for the warm-up, then for the measured window, reading the meters around the latter. */
async function measured(
  window: Window,
  drive: (seconds: number, latency?: Latency) => Promise<Counts>,
  meters: Meters,
): Promise<LoadResult> {
  await drive(window.warmupSeconds);
  const latency = new Latency();
  const before = { requests: meters.requests(), cpu: meters.hostCpuMs(), storage: meters.storage(), events: meters.eventsSent() };
  const started = performance.now();
  const counts = await drive(window.seconds, latency);
  return {
    ...counts,
    seconds: (performance.now() - started) / 1000,
    requests: meters.requests() - before.requests,
    hostCpuMs: meters.hostCpuMs() - before.cpu,
    storage: meters.storage() - before.storage,
    eventsSent: meters.eventsSent() - before.events,
    latency,
  };
}

/** The warm-up, then the measured window, then every operation issued in it answered. */
export function runOffered(load: OfferedLoad, op: (producer: number) => Promise<void>, meters: Meters): Promise<LoadResult> {
  return measured(load, (seconds, latency) => offer(load, seconds, op, latency), meters);
}

/** `callers` closed loops of `op` (each awaiting its own before the next) over the warm-up and the window. */
export function runClosed(window: Window, callers: number, op: (caller: number) => Promise<void>, meters: Meters): Promise<LoadResult> {
  return measured(window, (seconds, latency) => loop(callers, seconds, op, latency), meters);
}

/** The host's CPU per second with nothing sent to it (its timers and pollers), over `seconds`. */
export async function idleCpuMsPerSecond(seconds: number, meters: Meters): Promise<number> {
  const cpu = meters.hostCpuMs();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  return (meters.hostCpuMs() - cpu) / ((performance.now() - started) / 1000);
}
