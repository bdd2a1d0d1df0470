/**
 * "Metrics on" for the hot-path benchmarks: the OpenTelemetry SDK's MeterProvider with a periodic
 * reader, wired through the app's own Telemetry port (shared/telemetry/port.ts), as
 * shared/app/telemetry.ts does when OTEL_EXPORTER_OTLP_ENDPOINT is set; only the exporter differs
 * (the SDK's in-memory one instead of OTLP over HTTP, so no collector is needed). The reader collects
 * every `exportIntervalMs` (1 s: sixty times as often as the app's default minute, so collections
 * and their observable callbacks fall in about every third on-window). "Off" is the app without
 * telemetry (`noTelemetry`): every instrument a no-op.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

import { type AnyValues, AttributeGuard, defaultAttributePolicy, type AttributePolicy } from '../../shared/telemetry/attributes';
import type { TelemetryDeclarations } from '../../shared/telemetry/declare';
import { noTelemetry, type Telemetry, telemetryOf } from '../../shared/telemetry/port';
import { fmt, pairedRatio, ratio } from './report';

const exportIntervalMs = 1000;

/** `npm run bench -- sequences counters --metrics-only`: only the metrics on/off part of those benchmarks. */
export const metricsOnly = process.argv.includes('--metrics-only');

export interface MetricsOn {
  readonly telemetry: Telemetry;
  readonly meters: MeterProvider;
  /** Data points exported so far (shows the reader really collected). */
  exportedPoints(): number;
  shutdown(): Promise<void>;
}

export function metricsOn(policy: AttributePolicy = defaultAttributePolicy): MetricsOn {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const meters = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: exportIntervalMs })],
  });
  const tracers = new BasicTracerProvider();
  return {
    telemetry: telemetryOf({ meters, tracers, policy }),
    meters,
    exportedPoints: () =>
      exporter
        .getMetrics()
        .flatMap((r) => r.scopeMetrics)
        .flatMap((s) => s.metrics)
        .reduce((n, m) => n + m.dataPoints.length, 0),
    async shutdown() {
      await Promise.allSettled([meters.shutdown(), tracers.shutdown()]);
    },
  };
}

/** The line every metrics-on/off comparison prints: what "on" was. */
export function describeMetricsOn(policy: AttributePolicy): string {
  const names = policy.callerNames.length === 0 ? 'none' : policy.callerNames.join(', ');
  return `metrics on = SDK MeterProvider + PeriodicExportingMetricReader (in-memory exporter, collected every ${exportIntervalMs / 1000} s), caller names recorded: ${names}; off = no-op instruments`;
}

export type Side = 'on' | 'off';

interface Adder {
  add(value: number, attributes: AnyValues): void;
}

const schedstat = existsSync('/proc/self/task');

/**
 * This process's CPU time so far, in seconds: on Linux the scheduler's own nanosecond count of each
 * thread (/proc/self/task/<tid>/schedstat, first field; https://docs.kernel.org/scheduler/sched-stats.html),
 * because getrusage (process.cpuUsage) moves in whole clock ticks, too coarse for a window that gets
 * a few tens of milliseconds of a busy machine's CPU. Elsewhere, process.cpuUsage.
 */
function cpuSeconds(): number {
  if (!schedstat) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  }
  // Node's threads (V8's workers, libuv's pool) live as long as the process, so none drops out between two readings.
  let ns = 0;
  for (const task of readdirSync('/proc/self/task')) ns += Number(readFileSync(`/proc/self/task/${task}/schedstat`, 'utf8').split(' ')[0]);
  return ns / 1e9;
}

type Pair = { readonly value: number; readonly baseline: number };

/** Each pair's on/off rates, per second of wall-clock time and per second of this process's CPU time. */
export interface Pairs {
  readonly wall: readonly Pair[];
  readonly cpu: readonly Pair[];
}

/**
 * Runs `rounds` pairs of windows back to back, one with metrics on and one off (`window` runs one and
 * answers how many operations it completed), and answers each pair's two rates. Load from elsewhere
 * on the machine drifts over seconds, so it falls on both windows of a pair alike; the side that goes
 * first swaps every round, so whatever a pair's order does (a warmer cache, a collection falling due)
 * falls on both sides equally often. Rates are also taken per second of this process's CPU time
 * (every thread): on a shared machine the wall-clock rate mostly follows the share of the cores the
 * scheduler gave this process, which the work per CPU-second does not.
 */
export async function alternate(rounds: number, window: (side: Side) => Promise<number>): Promise<Pairs> {
  const wall: Pair[] = [];
  const cpu: Pair[] = [];
  for (let round = 0; round < rounds; round++) {
    const rate = { on: { wall: NaN, cpu: NaN }, off: { wall: NaN, cpu: NaN } };
    for (const side of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      globalThis.gc?.();
      const started = performance.now();
      const cpuBefore = cpuSeconds();
      const operations = await window(side);
      rate[side] = { wall: (operations / (performance.now() - started)) * 1000, cpu: operations / (cpuSeconds() - cpuBefore) };
    }
    wall.push({ value: rate.on.wall, baseline: rate.off.wall });
    cpu.push({ value: rate.on.cpu, baseline: rate.off.cpu });
  }
  return { wall, cpu };
}

/** Prints the on/off ratios of `alternate`'s pairs: per CPU-second (the target's) and per wall-clock second. */
export function onOffRatios(name: string, unit: string, pairs: Pairs): void {
  pairedRatio(`metrics on/off ${unit} per CPU-second, ${name}`, pairs.cpu, { atLeast: 0.95 });
  pairedRatio(`metrics on/off ${unit}/s (wall clock), ${name}`, pairs.wall);
}

/**
 * What recording one value costs, in ns per call: off (the no-op instrument), on as shipped (the
 * attribute set looked up in the instrument's cache) and on as before the cache (the guard building
 * and checking a new set on every record, then the same SDK instrument). Prints them and the ratio
 * of the cached path to the uncached one, and answers the shipped figures.
 */
export function recordingCost(
  on: MetricsOn,
  policy: AttributePolicy,
  declarations: TelemetryDeclarations,
  key: string,
  values: (i: number) => AnyValues,
): { readonly onNs: number; readonly offNs: number } {
  const declared = declarations.metrics[key];
  if (declared?.kind !== 'counter') throw new Error(`${key} is not a counter`);
  const adder = (telemetry: Telemetry): Adder => (telemetry.of(declarations).metrics as Readonly<Record<string, Adder>>)[key]!;
  const [off, shipped] = [adder(noTelemetry), adder(on.telemetry)];
  const guard = new AttributeGuard(policy);
  const sdk = on.meters.getMeter('bench.uncached').createCounter(`${declared.name}.uncached`);
  const offNs = nsPerCall((i) => off.add(1, values(i)));
  const uncachedNs = nsPerCall((i) => sdk.add(1, guard.filter(declared.attributes, values(i))));
  const onNs = nsPerCall((i) => shipped.add(1, values(i)));
  console.log(
    `METRICS recording one ${declared.name} (CPU ns per call): off ${fmt(offNs)} ns, on ${fmt(onNs)} ns (attribute sets cached), ` +
      `on ${fmt(uncachedNs)} ns (checked on every record, as before the cache)`,
  );
  ratio('recording cost, attribute sets cached vs checked on every record (CPU ns per call)', onNs, uncachedNs);
  return { onNs, offNs };
}

/**
 * CPU nanoseconds per call of `record`, the median of 5 runs of `calls` calls: what one recording
 * costs the hot path, free of the storage latency that dominates (and blurs) a throughput ratio.
 * CPU time, not wall-clock time: on a shared machine the clock also counts the time other processes
 * had the core.
 */
function nsPerCall(record: (i: number) => void, calls = 200_000): number {
  const runs: number[] = [];
  for (let run = 0; run < 5; run++) {
    const started = cpuSeconds();
    for (let i = 0; i < calls; i++) record(i);
    runs.push(((cpuSeconds() - started) * 1e9) / calls);
  }
  return runs.sort((a, b) => a - b)[2] ?? NaN;
}
