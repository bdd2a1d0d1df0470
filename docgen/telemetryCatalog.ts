/**
 * Every capability's telemetry declarations, in the order docs/operations.md lists them. The metric
 * list there is generated from this (`npm run metrics:sync`), the infra test checks every alert names
 * one of these metrics, and a test checks each follows the naming rules.
 */
import { counterTelemetry } from '../shared/counters/metrics';
import { effectTelemetry } from '../shared/effects/metrics';
import { gateTelemetry } from '../shared/gates/metrics';
import { httpTelemetry } from '../shared/http/metrics';
import { jobTelemetry } from '../shared/jobs/metrics';
import { scheduleTelemetry } from '../shared/schedules/metrics';
import { sequenceTelemetry } from '../shared/sequences/metrics';
import { storageTelemetry } from '../shared/storage/metrics';
import { streamTelemetry } from '../shared/streams/metrics';
import type { MetricDeclaration, SpanDeclaration, TelemetryDeclarations } from '../shared/telemetry/declare';

const telemetryCatalog: readonly { readonly capability: string; readonly declarations: TelemetryDeclarations }[] = [
  { capability: 'sequences', declarations: sequenceTelemetry },
  { capability: 'counters', declarations: counterTelemetry },
  { capability: 'gates', declarations: gateTelemetry },
  { capability: 'schedules', declarations: scheduleTelemetry },
  { capability: 'effects', declarations: effectTelemetry },
  { capability: 'jobs', declarations: jobTelemetry },
  { capability: 'streams', declarations: streamTelemetry },
  { capability: 'http', declarations: httpTelemetry },
  { capability: 'storage', declarations: storageTelemetry },
];

export function declaredMetrics(): { readonly capability: string; readonly metric: MetricDeclaration }[] {
  return telemetryCatalog.flatMap(({ capability, declarations }) =>
    Object.values<MetricDeclaration>(declarations.metrics).map((metric) => ({ capability, metric })),
  );
}

export function declaredSpans(): { readonly capability: string; readonly span: SpanDeclaration }[] {
  return telemetryCatalog.flatMap(({ capability, declarations }) =>
    Object.values<SpanDeclaration>(declarations.spans).map((span) => ({ capability, span })),
  );
}
