/**
 * What `npm run metrics:sync` writes into docs/operations.md from the declarations (telemetryCatalog.ts):
 * the metric list and the span list. A test compares the committed page with this.
 */
import type { MetricAttribute, MetricDeclaration, SpanAttribute } from '../shared/telemetry/declare';
import { markdownTable } from './markdownTable';
import { declaredMetrics, declaredSpans } from './telemetryCatalog';

const kinds: Record<MetricDeclaration['kind'], string> = {
  counter: 'counter',
  upDownCounter: 'up-down counter',
  histogram: 'histogram',
  gauge: 'gauge',
  observableCounter: 'counter (observed)',
  observableUpDownCounter: 'up-down counter (observed)',
  observableGauge: 'gauge (observed)',
};

function attributeText(key: string, spec: SpanAttribute | MetricAttribute): string {
  switch (spec.kind) {
    case 'enum':
      return `\`${key}\` (${spec.values.join(' \\| ')})`;
    case 'caller':
      return `\`${key}\` (if allowed)`;
    case 'operator':
    case 'httpStatus':
    case 'appId':
      return `\`${key}\``;
  }
}

function attributes(specs: Readonly<Record<string, SpanAttribute>>): string {
  const keys = Object.keys(specs);
  return keys.length === 0 ? '' : keys.map((key) => attributeText(key, specs[key] as SpanAttribute)).join(', ');
}

function metricsTable(): string {
  return markdownTable(
    ['metric', 'kind', 'unit', 'attributes', 'meaning'],
    declaredMetrics().map(({ metric }) => [
      `\`${metric.name}\``,
      kinds[metric.kind],
      `\`${metric.unit}\``,
      attributes(metric.attributes),
      metric.description.replaceAll('|', '\\|'),
    ]),
  );
}

function spansTable(): string {
  return markdownTable(
    ['span', 'kind', 'attributes', 'what it covers'],
    declaredSpans().map(({ span }) => [
      `\`${span.name}\``,
      span.kind,
      [span.messaging === undefined ? '' : `\`messaging.operation.type\` (${span.messaging})`, attributes(span.attributes)]
        .filter((cell) => cell !== '')
        .join(', '),
      span.description.replaceAll('|', '\\|'),
    ]),
  );
}

const markers = {
  metrics: { begin: '<!-- metrics:begin (npm run metrics:sync) -->', end: '<!-- metrics:end -->' },
  spans: { begin: '<!-- spans:begin (npm run metrics:sync) -->', end: '<!-- spans:end -->' },
} as const;

function replaceBetween(page: string, marker: { begin: string; end: string }, body: string): string {
  const begin = page.indexOf(marker.begin);
  const end = page.indexOf(marker.end);
  if (begin < 0 || end < begin) throw new Error(`docs/operations.md has no ${marker.begin} … ${marker.end} markers`);
  return `${page.slice(0, begin + marker.begin.length)}\n\n${body}\n\n${page.slice(end)}`;
}

/** The page with its generated metric and span lists replaced. */
export function withTelemetryTables(page: string): string {
  return replaceBetween(replaceBetween(page, markers.metrics, metricsTable()), markers.spans, spansTable());
}
