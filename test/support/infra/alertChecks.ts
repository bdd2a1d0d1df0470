/**
 * The checks behind test/tools/infra/alerts.test.ts, as functions of plain data so that test can also
 * show each one bites: an alert rule against the metric declarations, a deployed alert against its
 * rule, and docs/operations.md's alert table against the deployed alerts.
 *
 * How the Azure Monitor exporter writes each kind to customMetrics (its metricUtils.ts,
 * https://github.com/Azure/azure-sdk-for-js/blob/main/sdk/monitor/monitor-opentelemetry-exporter/src/utils/metricUtils.ts,
 * and its metric exporter's selectAggregationTemporality in src/export/metric.ts): counters are
 * DELTA, one point per export whose value is the increase; gauges and up-down counters report a value;
 * histograms report sum, count, min and max.
 */
import type { InstrumentKind, MetricDeclaration } from '../../../shared/telemetry/declare';
import { at, isPlainObject, type JsonObject, type Resource, textOf } from './deployment';

/** One entry of infra/modules/alerts.bicep's `rules` (its alertRule type). */
export interface AlertRule {
  readonly name: string;
  readonly description: string;
  readonly metric: string;
  readonly column: string;
  readonly aggregation: string;
  readonly splitBy: string;
  readonly filterBy: string;
  readonly filterAtLeast: number;
  readonly filterOneOf: readonly string[];
  readonly threshold: number;
  readonly window: string;
}

/** The customMetrics columns, each with its window aggregation, that fit each kind (see the file comment). */
const sum = 'valueSum/Total';
// A gauge's worst reading in a window ("in N min"), or its lowest ("for N min": past the threshold throughout).
const gaugeReadings = ['value/Maximum', 'value/Minimum'];
const readingsOf: Readonly<Record<InstrumentKind, readonly string[]>> = {
  counter: [sum],
  observableCounter: [sum],
  upDownCounter: gaugeReadings,
  observableUpDownCounter: gaugeReadings,
  gauge: gaugeReadings,
  observableGauge: gaugeReadings,
  // The worst value recorded, or how many were recorded.
  histogram: ['valueMax/Maximum', 'valueCount/Total'],
};

/** What is wrong with each rule against the declared metrics (empty: nothing). */
export function alertProblems(rules: readonly AlertRule[], metrics: readonly MetricDeclaration[]): string[] {
  const byName = new Map(metrics.map((metric) => [metric.name, metric]));
  return rules.flatMap((rule) => {
    const metric = byName.get(rule.metric);
    if (metric === undefined) return [`${rule.name}: the app declares no metric ${rule.metric}`];
    const problems: string[] = [];
    const readings = readingsOf[metric.kind];
    if (!readings.includes(`${rule.column}/${rule.aggregation}`)) {
      problems.push(`${rule.name}: a ${metric.kind} is read as ${readings.join(' or ')}, not ${rule.column}/${rule.aggregation}`);
    }
    if (rule.splitBy !== '' && !Object.keys(metric.attributes).includes(rule.splitBy)) {
      problems.push(`${rule.name}: ${rule.metric} has no attribute ${rule.splitBy}`);
    }
    const filter = rule.filterBy === '' ? undefined : metric.attributes[rule.filterBy];
    if (rule.filterBy !== '' && rule.filterOneOf.length === 0 && filter?.kind !== 'httpStatus') {
      // The numeric filter compares numbers, so it must be an attribute recorded as one (an HTTP status).
      problems.push(`${rule.name}: ${rule.metric} has no numeric attribute ${rule.filterBy}`);
    }
    if (rule.filterOneOf.length > 0) {
      const values = filter?.kind === 'enum' ? filter.values : [];
      const unknown = rule.filterOneOf.filter((value) => !values.includes(value));
      if (filter?.kind !== 'enum') problems.push(`${rule.name}: ${rule.metric} has no enumerated attribute ${rule.filterBy}`);
      else if (unknown.length > 0) problems.push(`${rule.name}: ${rule.filterBy} of ${rule.metric} is never ${unknown.join(', ')}`);
    }
    return problems;
  });
}

/** The query a rule's alert must run (the Bicep builds it; this says what it must come to). */
export function expectedQuery(rule: AlertRule): string {
  const filter =
    rule.filterBy === ''
      ? ''
      : rule.filterOneOf.length === 0
        ? ` | where toint(customDimensions['${rule.filterBy}']) >= ${rule.filterAtLeast}`
        : ` | where tostring(customDimensions['${rule.filterBy}']) in (${rule.filterOneOf.map((v) => `'${v}'`).join(', ')})`;
  const split = rule.splitBy === '' ? '' : `, Split = tostring(customDimensions['${rule.splitBy}'])`;
  return `customMetrics | where name == '${rule.metric}'${filter} | project timestamp, Measure = ${rule.column}${split}`;
}

/** A deployed alert rule's terms: what the documentation must state. */
export interface AlertTerms {
  readonly name: string;
  readonly description: string;
  readonly window: string;
  readonly aggregation: string;
  readonly operator: string;
  readonly threshold: number;
}

/** The (one) condition of a deployed alert rule. */
export function criterionOf(alert: Resource | undefined): JsonObject | undefined {
  const all = at(alert?.body, 'properties.criteria.allOf');
  const first = Array.isArray(all) ? (all as readonly unknown[])[0] : undefined;
  return isPlainObject(first as JsonObject) ? (first as JsonObject) : undefined;
}

export function termsOf(alert: Resource, prefix: string): AlertTerms {
  const criterion = criterionOf(alert);
  return {
    name: alert.name.slice(prefix.length + 1),
    description: textOf(at(alert.body, 'properties.description')),
    window: textOf(at(alert.body, 'properties.windowSize')),
    aggregation: textOf(at(criterion, 'timeAggregation')),
    operator: textOf(at(criterion, 'operator')),
    threshold: Number(at(criterion, 'threshold')),
  };
}

function minutesOf(window: string): number | undefined {
  const match = /^PT(?:(\d+)H)?(?:(\d+)M)?$/.exec(window);
  return match === null ? undefined : Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0);
}

/**
 * Where the documentation (a row's "fires when" cell) or a rule's own description disagrees with the
 * rule. "for N min" is what a rule says when the signal must hold for the whole window (its lowest
 * reading, or "fewer than" for no data); "in N min" when one point in the window fires it.
 */
export function documentationProblems(alerts: readonly AlertTerms[], documented: ReadonlyMap<string, string>): string[] {
  const problems = [...documented.keys()]
    .filter((name) => !alerts.some((a) => a.name === name))
    .map((name) => `${name}: documented, not deployed`);
  for (const alert of alerts) {
    const cell = documented.get(alert.name);
    if (cell === undefined) {
      problems.push(`${alert.name}: not in docs/operations.md#alerts`);
      continue;
    }
    const minutes = minutesOf(alert.window);
    const whole = alert.aggregation === 'Minimum' || alert.operator === 'LessThan';
    const [says, not] = whole ? ['for', 'in'] : ['in', 'for'];
    for (const [where, text, unit] of [
      ['docs', cell, 'min'],
      ['description', alert.description, 'minutes'],
    ] as const) {
      if (!new RegExp(`\\b${says} ${minutes} ${unit}\\b`).test(text) || new RegExp(`\\b${not} ${minutes} ${unit}\\b`).test(text)) {
        problems.push(
          `${alert.name}: the ${where} must say "${says} ${minutes} ${unit}" (window ${alert.window}, ${alert.aggregation}): ${text}`,
        );
      }
    }
    const threshold = alert.threshold.toLocaleString('en-US');
    const stated =
      alert.operator === 'LessThan'
        ? cell.includes(`fewer than ${threshold}`)
        : alert.threshold === 0
          ? /\bany\b|\babove 0\b/.test(cell)
          : new RegExp(`(?<![\\d,.])${threshold.replace(/,/g, ',')}(?![\\d,])`).test(cell);
    if (!stated) problems.push(`${alert.name}: the docs do not state its threshold (${alert.operator} ${threshold}): ${cell}`);
  }
  return problems;
}

/** The "fires when" cell of each row of docs/operations.md's alert table, by rule name. */
export function documentedAlerts(markdown: string): Map<string, string> {
  const section = markdown.slice(markdown.indexOf('## Alerts\n'), markdown.indexOf('\n## ', markdown.indexOf('## Alerts\n') + 1));
  const rows = section.split('\n').filter((line) => /^\| `[a-z-]+` /.test(line));
  return new Map(
    rows.map((row) => {
      const [name = '', firesWhen = ''] = row
        .slice(1)
        .split(' | ')
        .map((cell) => cell.trim());
      return [name.replace(/`/g, ''), firesWhen];
    }),
  );
}

/** Every metric name a workbook query selects (`name == '…'`), per query item. */
export function workbookQueries(serialized: string): { readonly item: string; readonly metrics: string[] }[] {
  const doc = JSON.parse(serialized) as { items: { name: string; type: number; content: { query?: string } }[] };
  return doc.items
    .filter((item) => item.type === 3)
    .map((item) => ({ item: item.name, metrics: [...(item.content.query ?? '').matchAll(/\bname\s*==\s*'([^']+)'/g)].map((m) => m[1]!) }));
}
