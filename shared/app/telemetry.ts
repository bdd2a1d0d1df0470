/**
 * The app's meter and tracer providers, built once by the composition root from the standard
 * OpenTelemetry variables (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/):
 *
 * - `OTEL_EXPORTER_OTLP_ENDPOINT` (or the `_METRICS_`/`_TRACES_` ones): OTLP over HTTP with JSON
 *   bodies, to any collector — locally too (docs/operations.md);
 * - `APPLICATIONINSIGHTS_CONNECTION_STRING`: Azure Monitor, with the Entra token of the managed identity
 *   that `APPLICATIONINSIGHTS_AUTHENTICATION_STRING` names (`ClientId=…;Authorization=AAD`, as infra sets
 *   it; the component has local auth off);
 * - neither, or `OTEL_SDK_DISABLED=true`: no telemetry at all, and the instruments cost one empty call.
 *
 * The providers are the app's own, not the process's global ones: each capability gets its instruments
 * through the Telemetry port (shared/telemetry/port.ts), so a test builds the same app on an in-memory one.
 */
import type { ManagedIdentityCredential } from '@azure/identity';
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';

import { azureMonitorExporters, identitySdk, otlpMetricExporters, otlpTraceExporters } from '../onDemand';
import { appResource, appVersion, type AttributePolicy, freshGauges, noTelemetry, type Telemetry, telemetryOf } from '../telemetry';

type Env = Readonly<Record<string, string | undefined>>;

export interface AppTelemetry {
  readonly telemetry: Telemetry;
  /** Where it exports (`otlp`, `azureMonitor`), for the start-up log line; empty when off. */
  readonly exporters: readonly string[];
  /** Exports what is pending and stops (the host's appTerminate). */
  shutdown(): Promise<void>;
}

export const telemetryOff: AppTelemetry = { telemetry: noTelemetry, exporters: [], shutdown: () => Promise.resolve() };

/** Metrics are collected and exported once a minute unless OTEL_METRIC_EXPORT_INTERVAL says otherwise (ms). */
const defaultExportIntervalMs = 60_000;

function value(env: Env, name: string): string | undefined {
  const text = env[name]?.trim();
  return text === undefined || text === '' ? undefined : text;
}

/** The signal's endpoint: its own variable as given, or the base endpoint with the signal's path. */
function otlpUrl(env: Env, signal: 'metrics' | 'traces'): string | undefined {
  const own = value(env, `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`);
  if (own !== undefined) return own;
  const base = value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  return base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/${signal}`;
}

/** The client id in `ClientId=<id>;Authorization=AAD`; undefined for a system-assigned identity or no AAD. */
function azureMonitorCredential(env: Env): ManagedIdentityCredential | undefined {
  const auth = value(env, 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING');
  if (auth === undefined) return undefined;
  const parts = new Map(
    auth.split(';').flatMap((segment) => {
      const at = segment.indexOf('=');
      return at > 0 ? [[segment.slice(0, at).trim().toLowerCase(), segment.slice(at + 1).trim()] as const] : [];
    }),
  );
  if (parts.get('authorization')?.toLowerCase() !== 'aad') return undefined;
  const clientId = parts.get('clientid');
  const { ManagedIdentityCredential } = identitySdk();
  return clientId === undefined ? new ManagedIdentityCredential() : new ManagedIdentityCredential({ clientId });
}

export function telemetryFromEnvironment(env: Env, policy: AttributePolicy, instanceId: string): AppTelemetry {
  if (value(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return telemetryOff;
  const metricExporters: PushMetricExporter[] = [];
  const spanExporters: SpanExporter[] = [];
  const exporters: string[] = [];
  const metricsUrl = otlpUrl(env, 'metrics');
  const tracesUrl = otlpUrl(env, 'traces');
  if (metricsUrl !== undefined) metricExporters.push(new (otlpMetricExporters().OTLPMetricExporter)({ url: metricsUrl }));
  if (tracesUrl !== undefined) spanExporters.push(new (otlpTraceExporters().OTLPTraceExporter)({ url: tracesUrl }));
  if (metricsUrl !== undefined || tracesUrl !== undefined) exporters.push('otlp');
  const connectionString = value(env, 'APPLICATIONINSIGHTS_CONNECTION_STRING');
  if (connectionString !== undefined) {
    const credential = azureMonitorCredential(env);
    const options = { connectionString, ...(credential === undefined ? {} : { credential }) };
    const { AzureMonitorMetricExporter, AzureMonitorTraceExporter } = azureMonitorExporters();
    metricExporters.push(new AzureMonitorMetricExporter(options));
    spanExporters.push(new AzureMonitorTraceExporter(options));
    exporters.push('azureMonitor');
  }
  if (exporters.length === 0) return telemetryOff;

  const interval = Number(value(env, 'OTEL_METRIC_EXPORT_INTERVAL') ?? defaultExportIntervalMs);
  const resource = appResource({ instanceId, version: appVersion() });
  const meters = new MeterProvider({
    resource,
    readers: metricExporters.map(
      (exporter) =>
        new PeriodicExportingMetricReader({
          exporter: freshGauges(exporter),
          exportIntervalMillis: Number.isFinite(interval) && interval >= 1000 ? interval : defaultExportIntervalMs,
        }),
    ),
  });
  const tracers = new BasicTracerProvider({ resource, spanProcessors: spanExporters.map((exporter) => new BatchSpanProcessor(exporter)) });
  return {
    telemetry: telemetryOf({ meters, tracers, policy }),
    exporters,
    async shutdown() {
      await Promise.allSettled([meters.shutdown(), tracers.shutdown()]);
    },
  };
}
