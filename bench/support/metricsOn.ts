/**
 * "Metrics on" for the hot-path benchmarks: the OpenTelemetry SDK's MeterProvider with a periodic
 * reader, wired through the app's own Telemetry port (shared/telemetry/port.ts), as
 * shared/app/telemetry.ts does when OTEL_EXPORTER_OTLP_ENDPOINT is set; only the exporter differs
 * (the SDK's in-memory one instead of OTLP over HTTP, so no collector is needed). The reader collects
 * every `exportIntervalMs` (1 s: far more often than the app's default minute, so each measured
 * window includes collections and their observable callbacks). "Off" is the app without telemetry
 * (`noTelemetry`): every instrument a no-op.
 */
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

import { defaultAttributePolicy, type AttributePolicy } from '../../shared/telemetry/attributes';
import { type Telemetry, telemetryOf } from '../../shared/telemetry/port';

const exportIntervalMs = 1000;

export interface MetricsOn {
  readonly telemetry: Telemetry;
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

/**
 * Nanoseconds per call of `record`, the median of 5 runs of `calls` calls: what one recording costs
 * the hot path in CPU alone, free of the storage latency that dominates (and blurs) a throughput ratio.
 */
export function nsPerCall(record: (i: number) => void, calls = 200_000): number {
  const runs: number[] = [];
  for (let run = 0; run < 5; run++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) record(i);
    runs.push(Number(process.hrtime.bigint() - started) / calls);
  }
  return runs.sort((a, b) => a - b)[2] ?? NaN;
}
