// Log search alert rules and a workbook on the app's own OpenTelemetry metrics, as the Azure Monitor
// exporter writes them to Application Insights' customMetrics table: a counter's point is the delta
// since the last export (valueSum), a gauge's the value it observed (value), a histogram's the sum,
// count, min and max of what it recorded (valueMax is the worst one).
// Every rule names its metric, and the attribute it splits by, as data (the `rules` variable below):
// test/tools/infra/alerts.test.ts checks each against the declarations in shared/<capability>/metrics.ts,
// so renaming a metric without its alert fails the tests. docs/operations.md#alerts says what each
// alert means and what to do.

import { tagSet } from 'types.bicep'

@description('Name of the Application Insights component the app exports its metrics to.')
param applicationInsightsName string

@description('Prefix of every alert rule name (the Function App name, so two environments in one group never collide).')
param namePrefix string

@description('Azure region.')
param location string

@description('Tags for every resource.')
param tags tagSet

@description('Resource id of an existing action group every alert notifies. Empty: alerts fire in the portal only.')
param actionGroupId string

@description('One log search alert on one metric (docs/operations.md#alerts says what each means and what to do).')
type alertRule = {
  @description('Suffix of the rule name (`<app>-<name>`), as docs/operations.md lists it.')
  name: string
  @description('Shown in the portal and every notification; says the window the way the documentation does.')
  description: string
  @description('0 (critical) to 4 (verbose).')
  severity: int
  @description('The metric, exactly as the app declares it (shared/<capability>/metrics.ts).')
  metric: string
  @description('The customMetrics column that carries it: valueSum for counters, value for gauges, valueMax or valueCount for histograms.')
  column: 'value' | 'valueSum' | 'valueMax' | 'valueCount'
  @description('How a window\'s points combine: Total (sums, counts), Maximum (the worst point: "in N min"), Minimum (every point: "for N min").')
  aggregation: 'Total' | 'Maximum' | 'Minimum'
  @description('A metric attribute to alert on separately for each of its values, or empty.')
  splitBy: string
  @description('An attribute that selects the points counted, or empty.')
  filterBy: string
  @description('Count only points whose (numeric) filterBy attribute is at least this; with filterOneOf empty.')
  filterAtLeast: int
  @description('Count only points whose filterBy attribute is one of these values; empty for the numeric filter.')
  filterOneOf: string[]
  @description('Fires when the aggregate is greater than this.')
  threshold: int
  @description('The window the aggregate is taken over (ISO 8601); the documentation says the same.')
  window: string
}

// Each rule reads one metric as the Azure Monitor exporter writes it; test/tools/infra/alerts.test.ts
// checks every field against the app's declarations and the window against docs/operations.md.
@description('The alert rules: thresholds sized for the defaults in docs/configuration.md.')
var rules alertRule[] = [
  {
    name: 'job-backlog'
    description: 'A job work queue has held more than 10,000 envelopes for 15 minutes: processing does not keep up with submissions.'
    severity: 3
    metric: 'tallyho.job.backlog'
    column: 'value'
    aggregation: 'Minimum'
    splitBy: 'messaging.destination.name'
    filterBy: ''
    filterAtLeast: 0
    filterOneOf: []
    threshold: 10000
    window: 'PT15M'
  }
  {
    name: 'job-backlog-age'
    description: 'The oldest envelope waiting in a job work queue had waited more than 15 minutes (worst reading in 15 minutes): its queue is stuck or far behind.'
    severity: 2
    metric: 'tallyho.job.backlog.age'
    column: 'value'
    aggregation: 'Maximum'
    splitBy: 'messaging.destination.name'
    filterBy: ''
    filterAtLeast: 0
    filterOneOf: []
    threshold: 900
    window: 'PT15M'
  }
  {
    name: 'job-envelopes-poisoned'
    description: 'Job envelopes failed every delivery and reached a poison queue in 15 minutes: their items are recorded as failed.'
    severity: 2
    metric: 'tallyho.job.envelopes.poisoned'
    column: 'valueSum'
    aggregation: 'Total'
    splitBy: 'tallyho.job.processor'
    filterBy: ''
    filterAtLeast: 0
    filterOneOf: []
    threshold: 0
    window: 'PT15M'
  }
  {
    name: 'job-poison-backlog'
    description: 'A poison queue has held envelopes for 30 minutes: the poison handler is not draining it.'
    severity: 2
    metric: 'tallyho.job.poison.backlog'
    column: 'value'
    aggregation: 'Minimum'
    splitBy: 'messaging.destination.name'
    filterBy: ''
    filterAtLeast: 0
    filterOneOf: []
    threshold: 0
    window: 'PT30M'
  }
  {
    name: 'job-items-failed'
    description: 'Job items failed in 15 minutes (final results recorded as failed), per processor.'
    severity: 3
    metric: 'tallyho.job.items'
    column: 'valueSum'
    aggregation: 'Total'
    splitBy: 'tallyho.job.processor'
    filterBy: 'tallyho.outcome'
    filterAtLeast: 0
    filterOneOf: [
      'failed'
    ]
    threshold: 0
    window: 'PT15M'
  }
  {
    name: 'processor-backlog'
    description: 'A declared processor\'s queue has held more than 10,000 envelopes for 15 minutes: its workers do not keep up.'
    severity: 3
    metric: 'tallyho.job.processor.backlog'
    column: 'value'
    aggregation: 'Minimum'
    splitBy: 'tallyho.job.processor'
    filterBy: ''
    filterAtLeast: 0
    filterOneOf: []
    threshold: 10000
    window: 'PT15M'
  }
  {
    name: 'processor-backlog-age'
    description: 'The oldest envelope waiting for a declared processor\'s workers had waited more than 15 minutes (worst reading in 15 minutes): no worker is leasing, or they fall far behind.'
    severity: 2
    metric: 'tallyho.job.processor.backlog.age'
    column: 'value'
    aggregation: 'Maximum'
    splitBy: 'tallyho.job.processor'
    filterBy: ''
    filterAtLeast: 0
    filterOneOf: []
    threshold: 900
    window: 'PT15M'
  }
  {
    name: 'gate-actions-failed'
    description: 'Released runs\' actions failed in 15 minutes (recorded failed on the run after the release orchestration\'s retries).'
    severity: 2
    metric: 'tallyho.gate.run.actions'
    column: 'valueSum'
    aggregation: 'Total'
    splitBy: 'tallyho.gate.action.type'
    filterBy: 'tallyho.outcome'
    filterAtLeast: 0
    filterOneOf: [
      'failed'
    ]
    threshold: 0
    window: 'PT15M'
  }
  {
    name: 'schedule-runs-failed'
    description: 'Schedule runs failed in 15 minutes: their target (a job, a queue, Service Bus, a webhook, a gate) refused or could not be reached.'
    severity: 2
    metric: 'tallyho.schedule.runs'
    column: 'valueSum'
    aggregation: 'Total'
    splitBy: 'tallyho.schedule.target.type'
    filterBy: 'tallyho.outcome'
    filterAtLeast: 0
    filterOneOf: [
      'failed'
    ]
    threshold: 0
    window: 'PT15M'
  }
  {
    name: 'schedule-runs-missed'
    description: 'Schedule fires were missed in 15 minutes: they were due while nothing ran them, and their catch-up policy dropped them.'
    severity: 3
    metric: 'tallyho.schedule.runs'
    column: 'valueSum'
    aggregation: 'Total'
    splitBy: 'tallyho.schedule.target.type'
    filterBy: 'tallyho.outcome'
    filterAtLeast: 0
    filterOneOf: [
      'missed'
    ]
    threshold: 0
    window: 'PT15M'
  }
  {
    name: 'schedule-lateness'
    description: 'A schedule fire started more than 5 minutes after it was due (worst fire in 15 minutes).'
    severity: 3
    metric: 'tallyho.schedule.lateness'
    column: 'valueMax'
    aggregation: 'Maximum'
    splitBy: ''
    filterBy: ''
    filterAtLeast: 0
    filterOneOf: []
    threshold: 300
    window: 'PT15M'
  }
  {
    name: 'stream-flush-lag'
    description: 'Stream events waited more than 60 seconds between being accepted and being written to the log (worst batch in 15 minutes).'
    severity: 3
    metric: 'tallyho.stream.flush.lag'
    column: 'valueMax'
    aggregation: 'Maximum'
    splitBy: 'tallyho.stream.partition'
    filterBy: ''
    filterAtLeast: 0
    filterOneOf: []
    threshold: 60
    window: 'PT15M'
  }
  {
    name: 'stream-flush-errors'
    description: 'Writing stream batches to the log failed more than 5 times in 15 minutes (the flusher retries, events wait).'
    severity: 2
    metric: 'tallyho.stream.flush.errors'
    column: 'valueSum'
    aggregation: 'Total'
    splitBy: 'tallyho.stream.partition'
    filterBy: ''
    filterAtLeast: 0
    filterOneOf: []
    threshold: 5
    window: 'PT15M'
  }
  {
    name: 'counter-rollup-lag'
    description: 'Counter hits older than 15 minutes have stayed unfolded for 30 minutes: the rollup is failing or falling behind.'
    severity: 3
    metric: 'tallyho.counter.rollup.lag'
    column: 'value'
    aggregation: 'Minimum'
    splitBy: ''
    filterBy: ''
    filterAtLeast: 0
    filterOneOf: []
    threshold: 900
    window: 'PT30M'
  }
  {
    name: 'http-server-errors'
    description: 'More than 20 API requests were answered with a 5xx in 15 minutes: a dependency is failing or the app has a fault.'
    severity: 2
    metric: 'http.server.request.duration'
    column: 'valueCount'
    aggregation: 'Total'
    splitBy: 'http.route'
    filterBy: 'http.response.status_code'
    filterAtLeast: 500
    filterOneOf: []
    threshold: 20
    window: 'PT15M'
  }
  {
    name: 'storage-throttled'
    description: 'Azure Storage answered "slow down" (503 or 500 timeout) more than 100 times in 15 minutes.'
    severity: 3
    metric: 'tallyho.storage.throttled'
    column: 'valueSum'
    aggregation: 'Total'
    splitBy: 'tallyho.storage.service'
    filterBy: ''
    filterAtLeast: 0
    filterOneOf: []
    threshold: 100
    window: 'PT15M'
  }
]

@description('Prefix of every metric the app declares itself; "telemetry stopped" fires when none arrives.')
var appMetricPrefix = 'tallyho.'

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource alerts 'Microsoft.Insights/scheduledQueryRules@2026-03-01' = [
  for rule in rules: {
    name: '${namePrefix}-${rule.name}'
    location: location
    tags: tags
    kind: 'LogAlert'
    properties: {
      displayName: 'Tallyho ${rule.name} (${namePrefix})'
      description: rule.description
      severity: rule.severity
      enabled: true
      scopes: [
        appInsights.id
      ]
      evaluationFrequency: 'PT5M'
      windowSize: rule.window
      criteria: {
        allOf: [
          {
            // The rule aggregates Measure per window (and per Split value): the query only selects points.
            query: 'customMetrics | where name == \'${rule.metric}\'${empty(rule.filterBy) ? '' : (empty(rule.filterOneOf) ? ' | where toint(customDimensions[\'${rule.filterBy}\']) >= ${rule.filterAtLeast}' : ' | where tostring(customDimensions[\'${rule.filterBy}\']) in (${join(map(rule.filterOneOf, value => '\'${value}\''), ', ')})')} | project timestamp, Measure = ${rule.column}${empty(rule.splitBy) ? '' : ', Split = tostring(customDimensions[\'${rule.splitBy}\'])'}'
            timeAggregation: rule.aggregation
            metricMeasureColumn: 'Measure'
            dimensions: empty(rule.splitBy)
              ? []
              : [
                  {
                    name: 'Split'
                    operator: 'Include'
                    values: [
                      '*'
                    ]
                  }
                ]
            operator: 'GreaterThan'
            threshold: rule.threshold
            failingPeriods: {
              numberOfEvaluationPeriods: 1
              minFailingPeriodsToAlert: 1
            }
          }
        ]
      }
      autoMitigate: true
      actions: {
        actionGroups: empty(actionGroupId) ? [] : [actionGroupId]
      }
    }
  }
]

// Azure Monitor's "no data" alert for a log search rule: count the rows (no measure column) and fire
// when there are none. The app always has timers running (the counter rollup every 30 s, the job
// reconciler every minute), so a running app exports some tallyho.* metric every collection.
resource telemetryStopped 'Microsoft.Insights/scheduledQueryRules@2026-03-01' = {
  name: '${namePrefix}-telemetry-stopped'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: 'Tallyho telemetry-stopped (${namePrefix})'
    description: 'No ${appMetricPrefix}* metric has arrived for 15 minutes: no instance runs, or exporting telemetry fails, so every other alert is blind.'
    severity: 1
    enabled: true
    scopes: [
      appInsights.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      allOf: [
        {
          query: 'customMetrics | where name startswith \'${appMetricPrefix}\' | project timestamp'
          timeAggregation: 'Count'
          dimensions: []
          operator: 'LessThan'
          threshold: 1
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: true
    actions: {
      actionGroups: empty(actionGroupId) ? [] : [actionGroupId]
    }
  }
}

resource workbook 'Microsoft.Insights/workbooks@2023-06-01' = {
  name: guid(resourceGroup().id, namePrefix, 'tallyho-telemetry-workbook')
  location: location
  tags: tags
  kind: 'shared'
  properties: {
    displayName: 'Tallyho telemetry (${namePrefix})'
    category: 'workbook'
    sourceId: appInsights.id
    serializedData: loadTextContent('telemetry.workbook.json')
  }
}
