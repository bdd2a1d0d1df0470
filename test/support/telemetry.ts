/**
 * Telemetry into the OpenTelemetry SDK's in-memory exporters, for tests that assert a metric moved
 * or spans share a trace. The async-context manager is the one production registers (functions/_telemetry.ts),
 * so spans nest across awaits here as they do there.
 */
import { context as otelContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

import { type AttributePolicy, defaultAttributePolicy } from '../../shared/telemetry/attributes';
import { freshGauges } from '../../shared/telemetry/freshGauges';
import { type Telemetry, telemetryOf } from '../../shared/telemetry/port';

let contextManager: AsyncLocalStorageContextManager | undefined;

interface Point {
  readonly attributes: Readonly<Record<string, unknown>>;
  /** A sum or gauge's value; a histogram's count. */
  readonly value: number;
  /** A histogram's sum (undefined for other kinds). */
  readonly sum: number | undefined;
  readonly max: number | undefined;
}

interface Collected {
  readonly names: readonly string[];
  points(name: string): Point[];
  /** The values (histograms: counts) of `name` added up over the points whose attributes include `where`. */
  total(name: string, where?: Readonly<Record<string, unknown>>): number;
  unit(name: string): string | undefined;
}

export interface MemoryTelemetry {
  readonly telemetry: Telemetry;
  collect(): Promise<Collected>;
  spans(): ReadableSpan[];
  shutdown(): Promise<void>;
}

export function memoryTelemetry(policy: Partial<AttributePolicy> = {}): MemoryTelemetry {
  if (contextManager === undefined) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    otelContext.setGlobalContextManager(contextManager);
  }
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // As the app reads its gauges (freshGauges): a gauge not observed in a collection reports nothing.
  const reader = new PeriodicExportingMetricReader({ exporter: freshGauges(metricExporter), exportIntervalMillis: 3_600_000 });
  const meters = new MeterProvider({ readers: [reader] });
  const spanExporter = new InMemorySpanExporter();
  const tracers = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  return {
    telemetry: telemetryOf({ meters, tracers, policy: { ...defaultAttributePolicy, ...policy } }),
    async collect() {
      metricExporter.reset();
      await reader.forceFlush();
      const latest = metricExporter.getMetrics().at(-1);
      const metrics = latest?.scopeMetrics.flatMap((s) => s.metrics) ?? [];
      const points = (name: string): Point[] =>
        metrics
          .filter((m) => m.descriptor.name === name)
          .flatMap((m) =>
            m.dataPoints.map((p): Point => {
              const v: unknown = p.value;
              if (m.dataPointType === DataPointType.HISTOGRAM) {
                const h = v as { count: number; sum?: number; max?: number };
                return { attributes: p.attributes, value: h.count, sum: h.sum, max: h.max };
              }
              return { attributes: p.attributes, value: v as number, sum: undefined, max: undefined };
            }),
          );
      return {
        names: metrics.map((m) => m.descriptor.name),
        points,
        total: (name, where = {}) =>
          points(name)
            .filter((p) => Object.entries(where).every(([k, value]) => p.attributes[k] === value))
            .reduce((sum, p) => sum + p.value, 0),
        unit: (name) => metrics.find((m) => m.descriptor.name === name)?.descriptor.unit,
      };
    },
    spans: () => spanExporter.getFinishedSpans(),
    async shutdown() {
      await Promise.allSettled([meters.shutdown(), tracers.shutdown()]);
    },
  };
}
