/**
 * infra/modules/alerts.bicep alerts on the app's own metrics, so each alert must name a metric the
 * app declares (shared/<capability>/metrics.ts, through shared/app/telemetryCatalog.ts), read it from
 * the customMetrics column its kind is exported in, and split it only by an attribute it declares.
 * A renamed metric or attribute fails here instead of leaving an alert that never fires.
 *
 * The rules are read from the compiled ARM JSON (a real `bicep build`): the module's `rules` variable
 * stays literal there, and the alert resource is checked to take its query from it.
 *
 * How the Azure Monitor exporter writes each kind to customMetrics (its metricUtils.ts,
 * https://github.com/Azure/azure-sdk-for-js/blob/main/sdk/monitor/monitor-opentelemetry-exporter/src/utils/metricUtils.ts,
 * and its metric exporter's selectAggregationTemporality in src/export/metric.ts): counters are
 * DELTA, one point per export whose value is the increase; gauges and up-down counters report a value;
 * histograms report sum, count, min and max.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { declaredMetrics } from '../../../shared/app/telemetryCatalog';
import type { InstrumentKind, MetricDeclaration } from '../../../shared/telemetry/declare';
import { type ArmResource, type ArmTemplate, describeInfra, infraDir, loadTemplates } from '../../support/infra/templates';

interface AlertRule {
  readonly name: string;
  readonly metric: string;
  readonly column: string;
  readonly aggregation: string;
  readonly splitBy: string;
  readonly filterBy: string;
  readonly filterAtLeast: number;
  readonly threshold: number;
}

/** The customMetrics columns, each with its window aggregation, that fit each kind (see the file comment). */
const sum = 'valueSum/Total';
const last = 'value/Maximum';
const readingsOf: Readonly<Record<InstrumentKind, readonly string[]>> = {
  counter: [sum],
  observableCounter: [sum],
  upDownCounter: [last],
  observableUpDownCounter: [last],
  gauge: [last],
  observableGauge: [last],
  // The worst value recorded, or how many were recorded.
  histogram: ['valueMax/Maximum', 'valueCount/Total'],
};

/** What is wrong with each rule against the declared metrics (empty: nothing). */
function alertProblems(rules: readonly AlertRule[], metrics: readonly MetricDeclaration[]): string[] {
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
    // The filter compares numbers, so it must be an attribute recorded as one (an HTTP status).
    if (rule.filterBy !== '' && metric.attributes[rule.filterBy]?.kind !== 'httpStatus') {
      problems.push(`${rule.name}: ${rule.metric} has no numeric attribute ${rule.filterBy}`);
    }
    return problems;
  });
}

/** Every metric name a workbook query selects (`name == '…'`), per query item. */
function workbookQueries(serialized: string): { readonly item: string; readonly metrics: string[] }[] {
  const doc = JSON.parse(serialized) as { items: { name: string; type: number; content: { query?: string } }[] };
  return doc.items
    .filter((item) => item.type === 3)
    .map((item) => ({ item: item.name, metrics: [...(item.content.query ?? '').matchAll(/\bname\s*==\s*'([^']+)'/g)].map((m) => m[1]!) }));
}

const metrics = declaredMetrics().map(({ metric }) => metric);
function alertsModule(main: ArmTemplate): {
  readonly deployment: ArmResource;
  readonly template: ArmTemplate;
  readonly rules: AlertRule[];
} {
  const deployment = main.resources?.alerts;
  const template = deployment?.properties?.template;
  const rules = template?.variables?.rules;
  if (template === undefined || !Array.isArray(rules)) throw new Error('main.bicep deploys no alerts module with a rules variable');
  return { deployment: deployment!, template, rules: rules as AlertRule[] };
}

describeInfra('alerts and workbook (infra/modules/alerts.bicep)', () => {
  let main: ArmTemplate;

  beforeAll(() => {
    main = loadTemplates().arm;
    // The run's first compile took about 40 s of CPU on a 2-core machine; later files reuse it.
  }, 600_000);

  it('main deploys them unless alertsEnabled is false', () => {
    const { deployment } = alertsModule(main);
    expect(deployment.condition).toBe("[parameters('alertsEnabled')]");
    expect(main.parameters?.alertsEnabled?.defaultValue).toBe(true);
  });

  it('every alert names a metric the app declares, read as its kind is exported, split by a declared attribute', () => {
    const { rules } = alertsModule(main);
    expect(rules.length).toBeGreaterThanOrEqual(6);
    expect(alertProblems(rules, metrics)).toEqual([]);
    expect(new Set(rules.map((rule) => rule.name)).size).toBe(rules.length);
    // The signals: job backlog and poisoned envelopes, stream flush lag and errors, schedule lateness, storage throttling.
    expect(rules.map((rule) => rule.metric)).toEqual(
      expect.arrayContaining([
        'tallyho.job.backlog',
        'tallyho.job.envelopes.poisoned',
        'tallyho.stream.flush.lag',
        'tallyho.stream.flush.errors',
        'tallyho.schedule.lateness',
        'tallyho.storage.throttled',
      ]),
    );
  });

  it('the alert resource takes its metric, column and split from those rules, one rule per alert', () => {
    const { template } = alertsModule(main);
    const alerts = Object.values(template.resources ?? {}).filter((r) => r.type === 'Microsoft.Insights/scheduledQueryRules');
    expect(alerts).toHaveLength(1);
    const alert = alerts[0] as ArmResource & { copy?: { count?: string } };
    expect(alert.copy?.count).toBe("[length(variables('rules'))]");
    const query = JSON.stringify(alert.properties?.criteria);
    for (const field of ['metric', 'column', 'splitBy', 'filterBy', 'filterAtLeast', 'aggregation', 'threshold']) {
      expect(query).toContain(`variables('rules')[copyIndex()].${field}`);
    }
    expect(query).toContain("customMetrics | where name == ''{0}''");
  });

  it('the workbook is the JSON file, and charts only declared metrics', () => {
    const { template } = alertsModule(main);
    const file = readFileSync(join(infraDir, 'modules', 'telemetry.workbook.json'), 'utf8');
    expect(Object.values(template.variables ?? {})).toContain(file);
    const queries = workbookQueries(file);
    expect(queries.length).toBeGreaterThanOrEqual(6);
    const declared = new Set(metrics.map((metric) => metric.name));
    for (const { item, metrics: named } of queries) {
      expect({ item, named: named.length > 0 }).toEqual({ item, named: true });
      expect({ item, undeclared: named.filter((name) => !declared.has(name)) }).toEqual({ item, undeclared: [] });
    }
  });
});

describe('the alert check', () => {
  it('the check bites: a renamed metric, a wrong column or an unknown attribute is reported', () => {
    const backlog = metrics.find((metric) => metric.name === 'tallyho.job.backlog')!;
    const rule: AlertRule = {
      name: 'job-backlog',
      metric: backlog.name,
      column: 'value',
      aggregation: 'Maximum',
      splitBy: 'messaging.destination.name',
      filterBy: '',
      filterAtLeast: 0,
      threshold: 1,
    };
    expect(alertProblems([rule], metrics)).toEqual([]);
    const renamed = metrics.map((metric) => (metric === backlog ? { ...metric, name: 'tallyho.job.queue.backlog' } : metric));
    expect(alertProblems([rule], renamed)).toEqual(['job-backlog: the app declares no metric tallyho.job.backlog']);
    expect(alertProblems([{ ...rule, column: 'valueSum', aggregation: 'Total' }], metrics)).toHaveLength(1);
    expect(alertProblems([{ ...rule, splitBy: 'tallyho.job.queue' }], metrics)).toEqual([
      'job-backlog: tallyho.job.backlog has no attribute tallyho.job.queue',
    ]);
    expect(alertProblems([{ ...rule, filterBy: 'messaging.destination.name', filterAtLeast: 500 }], metrics)).toEqual([
      'job-backlog: tallyho.job.backlog has no numeric attribute messaging.destination.name',
    ]);
    expect(
      workbookQueries(JSON.stringify({ items: [{ name: 'x', type: 3, content: { query: "customMetrics | where name == 'a.b'" } }] })),
    ).toEqual([{ item: 'x', metrics: ['a.b'] }]);
  });
});
