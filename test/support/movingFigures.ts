/**
 * The figures the telemetry tests set up a state for and see move, each with the test that does it:
 * the states the alerts of infra/modules/alerts.bicep fire on. test/tools/infra/alerts.test.ts
 * requires every alert's signal (its metric, and the attribute value it filters on) to be one of
 * these, and each test named here to exist in its file and to name the metric and the value (issue
 * #40: "a test asserts that each alert names a metric that the test above saw move").
 */
export interface MovingFigure {
  readonly metric: string;
  /** The attribute and values the alert filters on that the test produced (a status code: that code). */
  readonly attribute?: string;
  readonly values?: readonly string[];
  /** The test file (from the repository's root) and the test's title (a part of it that is unique there). */
  readonly file: string;
  readonly test: string;
}

const jobs = 'test/integration/telemetry/jobs.test.ts';
const schedulesStreams = 'test/integration/telemetry/schedulesStreams.test.ts';
const sequencesCounters = 'test/integration/telemetry/sequencesCounters.test.ts';
const e2e = 'test/e2e/telemetry.test.ts';

export const movingFigures: readonly MovingFigure[] = [
  { metric: 'tallyho.job.backlog', file: jobs, test: 'reads the backlog from the queues' },
  { metric: 'tallyho.job.backlog.age', file: jobs, test: 'reads the oldest envelope’s age and the poison backlog' },
  { metric: 'tallyho.job.poison.backlog', file: jobs, test: 'reads the oldest envelope’s age and the poison backlog' },
  { metric: 'tallyho.job.envelopes.poisoned', file: jobs, test: 'counts poisoned items and the poisoned envelope' },
  { metric: 'tallyho.job.items', attribute: 'tallyho.outcome', values: ['failed'], file: jobs, test: 'counts items by outcome' },
  { metric: 'tallyho.job.processor.backlog', file: e2e, test: 'a declared processor’s gauges move with its queue' },
  { metric: 'tallyho.job.processor.backlog.age', file: e2e, test: 'a declared processor’s gauges move with its queue' },
  {
    metric: 'tallyho.gate.run.actions',
    attribute: 'tallyho.outcome',
    values: ['failed'],
    file: 'test/unit/telemetry/gates.test.ts',
    test: 'a batch given up records its pending runs failed',
  },
  {
    metric: 'tallyho.schedule.runs',
    attribute: 'tallyho.outcome',
    values: ['failed'],
    file: schedulesStreams,
    test: 'counts a run whose target failed as failed',
  },
  {
    metric: 'tallyho.schedule.runs',
    attribute: 'tallyho.outcome',
    values: ['missed'],
    file: schedulesStreams,
    test: 'counts runs by outcome and target type',
  },
  { metric: 'tallyho.schedule.lateness', file: schedulesStreams, test: 'records how late a scheduled fire ran' },
  { metric: 'tallyho.stream.flush.lag', file: schedulesStreams, test: 'records flushed events, flush lag' },
  { metric: 'tallyho.stream.flush.errors', file: schedulesStreams, test: 'counts a failed write' },
  { metric: 'tallyho.counter.rollup.lag', file: sequencesCounters, test: 'the rollup lag grows with the age of the oldest unfolded hits' },
  {
    metric: 'http.server.request.duration',
    attribute: 'http.response.status_code',
    values: ['503'],
    file: e2e,
    test: 'a request answered 5xx because storage fails is measured',
  },
  { metric: 'tallyho.storage.throttled', file: sequencesCounters, test: 'counts the responses by which storage says "slow down"' },
];

/**
 * The telemetry-stopped alert's state: it reads no one metric but every metric named under a prefix
 * (`customMetrics | where name startswith '<prefix>'`), and fires when none arrives. Its test shows
 * the app's metrics arriving under that prefix while a host runs and stopping when the host stops.
 */
export const telemetryStoppedFigure = {
  prefix: 'tallyho.',
  file: 'test/e2e/telemetryStopped.test.ts',
  test: 'app metrics arrive under the alert’s prefix while the host runs, and none within two export intervals after it stopped',
} as const;
