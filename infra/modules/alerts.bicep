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

// Each rule: name (suffix of the rule name), description (shown in the portal and every notification),
// severity (0 critical to 4 verbose), metric (exactly as the app declares it), column (the customMetrics
// column that carries it: valueSum for counters, value for gauges, valueMax or valueCount for
// histograms), aggregation (how a window's points combine: Total for sums and counts, Maximum otherwise), splitBy (a metric attribute
// to alert on separately for each value, or empty), filterBy and filterAtLeast (count only points whose
// numeric attribute is at least this, or filterBy empty), threshold (fires when the aggregate is greater)
// and window (ISO 8601). (No user-defined type here: tree-sitter-bicep, which the tests parse with,
// does not read typed variables.)
@description('The alert rules: thresholds sized for the defaults in docs/configuration.md.')
var rules = [
  {
    name: 'job-backlog'
    description: 'A job work queue has held more than 10,000 envelopes for 15 minutes: processing does not keep up with submissions.'
    severity: 3
    metric: 'tallyho.job.backlog'
    column: 'value'
    aggregation: 'Maximum'
    filterBy: ''
    filterAtLeast: 0
    splitBy: 'messaging.destination.name'
    threshold: 10000
    window: 'PT15M'
  }
  {
    name: 'job-envelopes-poisoned'
    description: 'Job envelopes failed every delivery and reached a poison queue: their items are recorded as failed.'
    severity: 2
    metric: 'tallyho.job.envelopes.poisoned'
    column: 'valueSum'
    aggregation: 'Total'
    filterBy: ''
    filterAtLeast: 0
    splitBy: 'tallyho.job.processor'
    threshold: 0
    window: 'PT15M'
  }
  {
    name: 'job-poison-backlog'
    description: 'A poison queue still holds envelopes after 30 minutes: the poison handler is not draining it.'
    severity: 2
    metric: 'tallyho.job.poison.backlog'
    column: 'value'
    aggregation: 'Maximum'
    filterBy: ''
    filterAtLeast: 0
    splitBy: 'messaging.destination.name'
    threshold: 0
    window: 'PT30M'
  }
  {
    name: 'stream-flush-lag'
    description: 'Stream events waited more than 60 seconds between being accepted and being written to the log.'
    severity: 3
    metric: 'tallyho.stream.flush.lag'
    column: 'valueMax'
    aggregation: 'Maximum'
    filterBy: ''
    filterAtLeast: 0
    splitBy: 'tallyho.stream.partition'
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
    filterBy: ''
    filterAtLeast: 0
    splitBy: 'tallyho.stream.partition'
    threshold: 5
    window: 'PT15M'
  }
  {
    name: 'schedule-lateness'
    description: 'A schedule fire started more than 5 minutes after it was due.'
    severity: 3
    metric: 'tallyho.schedule.lateness'
    column: 'valueMax'
    aggregation: 'Maximum'
    filterBy: ''
    filterAtLeast: 0
    splitBy: ''
    threshold: 300
    window: 'PT15M'
  }
  {
    name: 'counter-rollup-lag'
    description: 'Counter hits older than 15 minutes are still not folded into totals: the rollup is failing or falling behind.'
    severity: 3
    metric: 'tallyho.counter.rollup.lag'
    column: 'value'
    aggregation: 'Maximum'
    filterBy: ''
    filterAtLeast: 0
    splitBy: ''
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
    filterBy: 'http.response.status_code'
    filterAtLeast: 500
    splitBy: 'http.route'
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
    filterBy: ''
    filterAtLeast: 0
    splitBy: 'tallyho.storage.service'
    threshold: 100
    window: 'PT15M'
  }
]

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
            query: 'customMetrics | where name == \'${rule.metric}\'${empty(rule.filterBy) ? '' : ' | where toint(customDimensions[\'${rule.filterBy}\']) >= ${rule.filterAtLeast}'} | project timestamp, Measure = ${rule.column}${empty(rule.splitBy) ? '' : ', Split = tostring(customDimensions[\'${rule.splitBy}\'])'}'
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
