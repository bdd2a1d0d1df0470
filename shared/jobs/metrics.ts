/**
 * The jobs capability's telemetry. A job is one trace: the submission's span, one span per envelope
 * delivery (continuing the traceparent the envelope carries under its seal) and the completion's.
 * Backlogs (and their oldest envelope's age) are read from the queues themselves when a reader
 * collects, so every instance reports the same figures; declared processors' queues too.
 */
import { appId, counter, declareTelemetry, histogram, observableGauge, oneOf, operatorName, span } from '../telemetry/declare';
import type { Telemetry } from '../telemetry/port';

const processor = { 'tallyho.job.processor': operatorName };
const queue = { 'messaging.destination.name': operatorName };

export const jobTelemetry = declareTelemetry(
  'tallyho.jobs',
  {
    items: counter({
      name: 'tallyho.job.items',
      unit: '{item}',
      description:
        'Items by outcome: succeeded or failed (final results recorded), retried (sent again in a smaller envelope), poisoned (their envelope reached a poison queue).',
      attributes: { ...processor, 'tallyho.outcome': oneOf('succeeded', 'failed', 'retried', 'poisoned') },
    }),
    backlog: observableGauge({
      name: 'tallyho.job.backlog',
      unit: '{message}',
      description: 'Envelopes waiting in a work queue (the queue’s approximate message count).',
      attributes: queue,
    }),
    backlogAge: observableGauge({
      name: 'tallyho.job.backlog.age',
      unit: 's',
      description:
        'Age of the oldest envelope waiting in a work queue (0: none waiting): since it was first queued, so a retried envelope keeps its age.',
      attributes: queue,
    }),
    processorBacklog: observableGauge({
      name: 'tallyho.job.processor.backlog',
      unit: '{message}',
      description:
        "Envelopes in a declared processor's queue and retry lane not yet done: waiting, leased, or waiting out a retry's back-off.",
      attributes: processor,
    }),
    processorBacklogAge: observableGauge({
      name: 'tallyho.job.processor.backlog.age',
      unit: 's',
      description: "Age of the oldest envelope waiting in a declared processor's queue (0: none waiting), since it was first queued.",
      attributes: processor,
    }),
    processorLeased: observableGauge({
      name: 'tallyho.job.processor.leased',
      unit: '{message}',
      description:
        "Envelopes of a declared processor's queue and retry lane held by a lease (or waiting out a retry's back-off); not reported while 32 or more wait (one peek shows 32).",
      attributes: processor,
    }),
    poisonBacklog: observableGauge({
      name: 'tallyho.job.poison.backlog',
      unit: '{message}',
      description: 'Envelopes in a poison queue not yet handled (each is recorded as failed items, then removed).',
      attributes: queue,
    }),
    attempts: histogram({
      name: 'tallyho.job.envelope.attempts',
      unit: '{attempt}',
      description: 'The delivery count of each envelope processed (1: first delivery); the host moves it to poison after maxDequeueCount.',
      attributes: processor,
      boundaries: [1, 2, 3, 4, 5, 10],
    }),
    poisoned: counter({
      name: 'tallyho.job.envelopes.poisoned',
      unit: '{envelope}',
      description:
        'Envelopes that failed every delivery and reached a poison queue (or could not be read there), and queue messages refused on their first delivery as no envelope of this app.',
      attributes: processor,
    }),
    completed: counter({
      name: 'tallyho.job.completions',
      unit: '{job}',
      description: 'Jobs finished, by final state (a cancelled job is finished without its processor’s reduce step).',
      attributes: { ...processor, 'tallyho.job.state': oneOf('completed', 'completedWithFailures', 'cancelled') },
    }),
  },
  {
    submit: span({
      name: 'tallyho.job.submit',
      kind: 'producer',
      messaging: 'send',
      description: "A job's submission: input stored, envelopes sent.",
      attributes: { 'tallyho.job.id': appId, ...processor },
    }),
    process: span({
      name: 'tallyho.job.process',
      kind: 'consumer',
      messaging: 'process',
      description: 'One delivery of one envelope.',
      attributes: { 'tallyho.job.id': appId, 'tallyho.job.envelope.id': appId, ...processor },
    }),
    poison: span({
      name: 'tallyho.job.poison',
      kind: 'consumer',
      messaging: 'process',
      description: 'An envelope from a poison queue, its items recorded as failed.',
      attributes: { 'tallyho.job.id': appId, 'tallyho.job.envelope.id': appId, ...processor },
    }),
    complete: span({
      name: 'tallyho.job.complete',
      description: "A job's completion: the processor's finalize step and the completed row.",
      attributes: { 'tallyho.job.id': appId, ...processor },
    }),
    push: span({
      name: 'tallyho.job.push',
      kind: 'producer',
      messaging: 'send',
      description: "One batch POSTed to a webhook processor's endpoint, with this span's traceparent header.",
      attributes: { 'tallyho.job.id': appId, 'tallyho.job.envelope.id': appId, ...processor },
    }),
    lease: span({
      name: 'tallyho.job.lease',
      kind: 'consumer',
      messaging: 'receive',
      description:
        "A batch leased to an external processor's worker (the messaging conventions' receive, from the message's receipt to the lease): a child of the lease request's span, linked to the job's submission; the lease answer carries its traceparent.",
      attributes: {
        'tallyho.job.id': appId,
        'tallyho.job.envelope.id': appId,
        ...processor,
        'messaging.destination.name': operatorName,
      },
    }),
    deliver: span({
      name: 'tallyho.job.deliver',
      kind: 'consumer',
      messaging: 'process',
      description: "A completed job's hand-on (its processor's deliver step, then its event), in the trigger of its own.",
      attributes: { 'tallyho.job.id': appId, ...processor },
    }),
  },
);

/** The capability's instruments and spans, bound once (createJobs) to the app's telemetry. */
export type JobInstruments = ReturnType<typeof jobInstruments>;

export function jobInstruments(telemetry: Telemetry) {
  return telemetry.of(jobTelemetry);
}

/**
 * One delivery's item outcomes, for every kind of processor (in-app, leased, pushed): its final
 * results by status, and the items that come back as a retry. `attempt` is the delivery's count.
 */
export function countOutcomes(
  { metrics }: JobInstruments,
  processor: string,
  finals: readonly { readonly status: string }[],
  retried: number,
  attempt?: number,
): void {
  const by = { 'tallyho.job.processor': processor };
  const succeeded = finals.filter((f) => f.status === 'succeeded').length;
  metrics.items.add(succeeded, { ...by, 'tallyho.outcome': 'succeeded' });
  metrics.items.add(finals.length - succeeded, { ...by, 'tallyho.outcome': 'failed' });
  metrics.items.add(retried, { ...by, 'tallyho.outcome': 'retried' });
  if (attempt !== undefined) metrics.attempts.record(attempt, by);
}
