/**
 * SDKs the app needs only when a deployment uses them, loaded on the first call instead of at start:
 * Service Bus (a schedule target), Entra credentials (managed-identity connections and the Azure
 * Monitor exporter) and the telemetry exporters. Every host process pays at start for what the app
 * loads then (a Functions cold start; each devhost and real-host start in the test run): with these
 * five left to first use, loading the app took 0.83 s of CPU instead of 0.99 s on the 2-core CI machine
 * (Node 20, dist/functions/index.js). `require` keeps what it loaded, so a getter costs nothing after
 * its first call; the types come from type-only imports, so nothing is loaded by them.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- loading on first use is the point of this module */
import type * as Identity from '@azure/identity';
import type * as Monitor from '@azure/monitor-opentelemetry-exporter';
import type * as ServiceBus from '@azure/service-bus';
import type * as OtlpMetrics from '@opentelemetry/exporter-metrics-otlp-http';
import type * as OtlpTraces from '@opentelemetry/exporter-trace-otlp-http';

export const identitySdk = (): typeof Identity => require('@azure/identity') as typeof Identity;
export const azureMonitorExporters = (): typeof Monitor => require('@azure/monitor-opentelemetry-exporter') as typeof Monitor;
export const serviceBusSdk = (): typeof ServiceBus => require('@azure/service-bus') as typeof ServiceBus;
export const otlpMetricExporters = (): typeof OtlpMetrics => require('@opentelemetry/exporter-metrics-otlp-http') as typeof OtlpMetrics;
export const otlpTraceExporters = (): typeof OtlpTraces => require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpTraces;
