/**
 * infra/modules/alerts.bicep alerts on the app's own metrics, so each alert must name a metric the
 * app declares (shared/<capability>/metrics.ts, through docgen/telemetryCatalog.ts), read it from
 * the customMetrics column its kind is exported in, filter and split it only by attributes (and
 * values) it declares, and say in docs/operations.md the window and threshold it really has. A
 * renamed metric or attribute, or a documented "for 30 min" that is really one point, fails here.
 *
 * The rules are data in the compiled ARM JSON (the module's `rules` variable); what a deployment
 * creates from them is read from the Bicep CLI's snapshot of each scenario (compile.ts). The checks
 * themselves are in test/support/infra/alertChecks.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { declaredMetrics } from '../../../docgen/telemetryCatalog';
import {
  alertProblems,
  type AlertRule,
  type AlertTerms,
  criterionOf,
  documentationProblems,
  documentedAlerts,
  expectedQuery,
  termsOf,
  workbookQueries,
} from '../../support/infra/alertChecks';
import { sampleIds } from '../../support/infra/compile';
import { movingFigures, telemetryStoppedFigure } from '../../support/movingFigures';
import { at, type Deployment, ofType, type Resource, textOf } from '../../support/infra/deployment';
import { type ArmTemplate, describeInfra, infraDir, repoRoot } from '../../support/infra/templates';

const declared = declaredMetrics().map(({ metric }) => metric);
const metrics = declared;
const documentation = readFileSync(join(repoRoot, 'docs', 'operations.md'), 'utf8');

function rulesOf(main: ArmTemplate): AlertRule[] {
  const rules = main.resources?.alerts?.properties?.template?.variables?.rules;
  if (!Array.isArray(rules)) throw new Error('main.bicep deploys no alerts module with a rules variable');
  return rules as AlertRule[];
}

describeInfra('alerts and workbook (infra/modules/alerts.bicep)', (templates) => {
  let rules: AlertRule[];
  let deployment: Deployment;
  let prefix: string;

  beforeAll(() => {
    rules = rulesOf(templates().arm);
    deployment = templates().deployments.defaults;
    prefix = ofType(deployment, 'Microsoft.Web/sites')[0]?.name ?? '(no site)';
  });

  const alertsIn = (d: Deployment): Resource[] => ofType(d, 'Microsoft.Insights/scheduledQueryRules');

  it('are deployed unless alertsEnabled is false, and notify the action group when one is given', () => {
    expect(
      alertsIn(deployment)
        .map((a) => a.name)
        .sort(),
    ).toEqual([...rules.map((r) => `${prefix}-${r.name}`), `${prefix}-telemetry-stopped`].sort());
    expect(alertsIn(templates().deployments.bare)).toEqual([]);
    expect(ofType(templates().deployments.bare, 'Microsoft.Insights/workbooks')).toEqual([]);
    for (const alert of alertsIn(deployment)) expect(at(alert.body, 'properties.actions.actionGroups')).toEqual([]);
    for (const alert of alertsIn(templates().deployments.everything)) {
      expect(at(alert.body, 'properties.actions.actionGroups')).toEqual([sampleIds.actionGroup]);
    }
  });

  it('every alert names a metric the app declares, read as its kind is exported, filtered and split by declared attributes', () => {
    expect(rules.length).toBeGreaterThanOrEqual(16);
    expect(alertProblems(rules, metrics)).toEqual([]);
    expect(new Set(rules.map((rule) => rule.name)).size).toBe(rules.length);
    // The signals issues #29 and #40 name: backlogs and their age, poison, failed items, actions and
    // schedule runs, declared processors' queues, stream flushes, lateness, throttling, server errors.
    expect(rules.map((rule) => rule.metric)).toEqual(
      expect.arrayContaining([
        'tallyho.job.backlog',
        'tallyho.job.backlog.age',
        'tallyho.job.envelopes.poisoned',
        'tallyho.job.items',
        'tallyho.job.processor.backlog',
        'tallyho.job.processor.backlog.age',
        'tallyho.gate.run.actions',
        'tallyho.schedule.runs',
        'tallyho.stream.flush.lag',
        'tallyho.stream.flush.errors',
        'tallyho.schedule.lateness',
        'tallyho.storage.throttled',
      ]),
    );
    const outcomes = (metric: string): string[] => rules.filter((r) => r.metric === metric).flatMap((r) => [...r.filterOneOf]);
    expect(outcomes('tallyho.gate.run.actions')).toEqual(['failed']);
    expect(outcomes('tallyho.schedule.runs').sort()).toEqual(['failed', 'missed']);
    expect(outcomes('tallyho.job.items')).toEqual(['failed']);
  });

  it('each deployed alert runs its rule: the query, aggregation, window and threshold the rule says, every 5 minutes', () => {
    for (const rule of rules) {
      const alert = alertsIn(deployment).find((a) => a.name === `${prefix}-${rule.name}`);
      const criterion = criterionOf(alert);
      expect({ rule: rule.name, query: at(criterion, 'query') }).toEqual({ rule: rule.name, query: expectedQuery(rule) });
      expect({
        rule: rule.name,
        window: at(alert?.body, 'properties.windowSize'),
        frequency: at(alert?.body, 'properties.evaluationFrequency'),
        aggregation: at(criterion, 'timeAggregation'),
        measure: at(criterion, 'metricMeasureColumn'),
        operator: at(criterion, 'operator'),
        threshold: at(criterion, 'threshold'),
        periods: at(criterion, 'failingPeriods'),
        split: at(criterion, 'dimensions'),
      }).toEqual({
        rule: rule.name,
        window: rule.window,
        frequency: 'PT5M',
        aggregation: rule.aggregation,
        measure: 'Measure',
        operator: 'GreaterThan',
        threshold: rule.threshold,
        periods: { numberOfEvaluationPeriods: 1, minFailingPeriodsToAlert: 1 },
        split: rule.splitBy === '' ? [] : [{ name: 'Split', operator: 'Include', values: ['*'] }],
      });
    }
  });

  it('telemetry-stopped fires when no app metric arrives: a row count below 1 over every metric the app declares', () => {
    const alert = alertsIn(deployment).find((a) => a.name === `${prefix}-telemetry-stopped`);
    const criterion = criterionOf(alert);
    const prefixOf = /^customMetrics \| where name startswith '([^']+)' \| project timestamp$/.exec(textOf(at(criterion, 'query')))?.[1];
    // The prefix its state test saw the app's metrics arrive under, and stop (test/support/movingFigures.ts).
    expect(prefixOf).toBe(telemetryStoppedFigure.prefix);
    const stateTest = readFileSync(join(repoRoot, telemetryStoppedFigure.file), 'utf8');
    const title = telemetryStoppedFigure.test.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(stateTest).toMatch(new RegExp(`test\\(\\s*'${title}'`));
    expect(stateTest).toMatch(/var appMetricPrefix/);
    expect({
      aggregation: at(criterion, 'timeAggregation'),
      operator: at(criterion, 'operator'),
      threshold: at(criterion, 'threshold'),
    }).toEqual({
      aggregation: 'Count',
      operator: 'LessThan',
      threshold: 1,
    });
    // Every metric the app declares itself counts; only the HTTP semantic-convention one does not.
    const own = declared.filter((metric) => metric.name.startsWith(prefixOf!));
    expect(declared.filter((metric) => !own.includes(metric)).map((metric) => metric.name)).toEqual(['http.server.request.duration']);
    expect(own.length).toBeGreaterThan(20);
  });

  it('docs/operations.md states each alert\'s own window and threshold ("for 30 min" only where the signal must hold that long)', () => {
    const documented = documentedAlerts(documentation);
    expect(documented.size).toBe(rules.length + 1);
    expect(
      documentationProblems(
        alertsIn(deployment).map((alert) => termsOf(alert, prefix)),
        documented,
      ),
    ).toEqual([]);
  });

  it('every alert reads a metric the app declares (shared/<capability>/metrics.ts), none a metric still to come', () => {
    const names = new Set(declared.map((metric) => metric.name));
    expect(rules.filter((rule) => !names.has(rule.metric)).map((rule) => `${rule.name}: ${rule.metric}`)).toEqual([]);
    // The docs no longer say some alerts read metrics the app does not export.
    expect(documentation.slice(documentation.indexOf('## Alerts\n'))).not.toMatch(/does not export yet|not export yet/);
  });

  it('every alert fires on a figure a telemetry test saw move: its metric, with the value it filters on (test/support/movingFigures.ts)', () => {
    const moved = (metric: string, attribute: string, value: (v: string) => boolean): boolean =>
      movingFigures.some((f) => f.metric === metric && (attribute === '' || (f.attribute === attribute && (f.values ?? []).some(value))));
    const unseen = rules.filter((rule) =>
      rule.filterBy === ''
        ? !moved(rule.metric, '', () => true)
        : rule.filterOneOf.length > 0
          ? !rule.filterOneOf.every((wanted) => moved(rule.metric, rule.filterBy, (v) => v === wanted))
          : !moved(rule.metric, rule.filterBy, (v) => Number(v) >= rule.filterAtLeast),
    );
    expect(unseen.map((rule) => `${rule.name}: ${rule.metric} ${rule.filterBy} ${rule.filterOneOf.join('|')}`)).toEqual([]);
    // Each figure's test is in its file, and names the metric and the values it moved.
    const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (const figure of movingFigures) {
      const text = readFileSync(join(repoRoot, figure.file), 'utf8');
      const titled = new RegExp(`(?:it|test|ownHostTest)\\(\\s*['"\`][^'"\`]*${escape(figure.test)}`).test(text);
      const named = [`'${figure.metric}'`, ...(figure.values ?? []).map((v) => (Number.isNaN(Number(v)) ? `'${v}'` : v))];
      expect({ figure: figure.metric, file: figure.file, titled, missing: named.filter((n) => !text.includes(n)) }).toEqual({
        figure: figure.metric,
        file: figure.file,
        titled: true,
        missing: [],
      });
    }
  });

  it('the workbook is the JSON file, and charts only declared metrics', () => {
    const alerts = templates().arm.resources?.alerts?.properties?.template;
    const file = readFileSync(join(infraDir, 'modules', 'telemetry.workbook.json'), 'utf8');
    expect(Object.values(alerts?.variables ?? {})).toContain(file);
    const workbook = ofType(deployment, 'Microsoft.Insights/workbooks');
    expect(workbook.map((w) => at(w.body, 'properties.serializedData'))).toEqual([file]);
    const queries = workbookQueries(file);
    expect(queries.length).toBeGreaterThanOrEqual(6);
    const names = new Set(declared.map((metric) => metric.name));
    for (const { item, metrics: named } of queries) {
      expect({ item, named: named.length > 0 }).toEqual({ item, named: true });
      expect({ item, undeclared: named.filter((name) => !names.has(name)) }).toEqual({ item, undeclared: [] });
    }
  });
});

describe('the alert checks bite', () => {
  const backlog = declared.find((metric) => metric.name === 'tallyho.job.backlog')!;
  const rule: AlertRule = {
    name: 'job-backlog',
    description: 'A queue held more than 10,000 envelopes for 15 minutes.',
    metric: backlog.name,
    column: 'value',
    aggregation: 'Minimum',
    splitBy: 'messaging.destination.name',
    filterBy: '',
    filterAtLeast: 0,
    filterOneOf: [],
    threshold: 10000,
    window: 'PT15M',
  };

  it('a renamed metric, a wrong column, an unknown attribute or an undeclared value is reported', () => {
    expect(alertProblems([rule], declared)).toEqual([]);
    const renamed = declared.map((metric) => (metric === backlog ? { ...metric, name: 'tallyho.job.queue.backlog' } : metric));
    expect(alertProblems([rule], renamed)).toEqual(['job-backlog: the app declares no metric tallyho.job.backlog']);
    expect(alertProblems([{ ...rule, column: 'valueSum', aggregation: 'Total' }], declared)).toHaveLength(1);
    expect(alertProblems([{ ...rule, splitBy: 'tallyho.job.queue' }], declared)).toEqual([
      'job-backlog: tallyho.job.backlog has no attribute tallyho.job.queue',
    ]);
    expect(alertProblems([{ ...rule, filterBy: 'messaging.destination.name', filterAtLeast: 500 }], declared)).toEqual([
      'job-backlog: tallyho.job.backlog has no numeric attribute messaging.destination.name',
    ]);
    const items: AlertRule = { ...rule, name: 'items', metric: 'tallyho.job.items', column: 'valueSum', aggregation: 'Total', splitBy: '' };
    expect(alertProblems([{ ...items, filterBy: 'tallyho.outcome', filterOneOf: ['failed'] }], declared)).toEqual([]);
    expect(alertProblems([{ ...items, filterBy: 'tallyho.outcome', filterOneOf: ['lost'] }], declared)).toEqual([
      'items: tallyho.outcome of tallyho.job.items is never lost',
    ]);
    expect(alertProblems([{ ...items, filterBy: 'tallyho.job.processor', filterOneOf: ['x'] }], declared)).toEqual([
      'items: tallyho.job.items has no enumerated attribute tallyho.job.processor',
    ]);
    expect(
      workbookQueries(JSON.stringify({ items: [{ name: 'x', type: 3, content: { query: "customMetrics | where name == 'a.b'" } }] })),
    ).toEqual([{ item: 'x', metrics: ['a.b'] }]);
  });

  it("a documented window or threshold that is not the rule's own is reported", () => {
    const terms: AlertTerms = { ...rule, operator: 'GreaterThan' };
    const docs = (cell: string): Map<string, string> => new Map([['job-backlog', cell]]);
    expect(documentationProblems([terms], docs('`tallyho.job.backlog` above 10,000 for 15 min'))).toEqual([]);
    // The two the issue found: "for 30 min" documented, one point in the window deployed.
    expect(
      documentationProblems([{ ...terms, aggregation: 'Maximum', description: 'above for 15 minutes' }], docs('above 10,000 for 15 min')),
    ).toHaveLength(2);
    expect(documentationProblems([{ ...terms, window: 'PT30M' }], docs('above 10,000 for 15 min'))).toHaveLength(2);
    expect(documentationProblems([{ ...terms, threshold: 5000 }], docs('above 10,000 for 15 min'))).toEqual([
      'job-backlog: the docs do not state its threshold (GreaterThan 5,000): above 10,000 for 15 min',
    ]);
    expect(documentationProblems([terms], new Map())).toEqual(['job-backlog: not in docs/operations.md#alerts']);
    expect(documentationProblems([], docs('x'))).toEqual(['job-backlog: documented, not deployed']);
    expect(
      documentedAlerts('## Alerts\n\n| alert | fires when |\n| --- | --- |\n| `a-b` | any x in 5 min | y |\n\n## Next\n| `c` | z |'),
    ).toEqual(new Map([['a-b', 'any x in 5 min']]));
  });
});
