/**
 * The streams capability's telemetry. The writer and its flusher are replayed Durable code and record
 * nothing; the appends (which read the writer's ledger anyway) and the flush activity (which writes the
 * log) record for them, and the buffer depth is read from the writers' ledgers at collection
 * (depthGauge.ts). Partitions are the operator's (TALLYHO_STREAMS_PARTITIONS, remaps); stream types
 * are callers' names.
 *
 * Tracing follows the events: an append's span (producer) hands its traceparent to the writer with the
 * request; the writer keeps it with the index of the append's first event while that event is
 * buffered, and the batch that takes it carries it (bounded: writerState.ts maxTraceMarks,
 * maxBatchLinks); the flush's span (consumer, the activity that writes the batch) links every append
 * whose events it wrote.
 */
import {
  callerName,
  counter,
  declareTelemetry,
  histogram,
  latencyBuckets,
  observableGauge,
  operatorName,
  span,
} from '../telemetry/declare';

const partition = { 'tallyho.stream.partition': operatorName };

export const streamTelemetry = declareTelemetry(
  'tallyho.streams',
  {
    depth: observableGauge({
      name: 'tallyho.stream.buffer.depth',
      unit: '{event}',
      description:
        "Events accepted and not yet in the log (buffered and in flight), summed over a partition's writers, read from each writer's ledger at collection; a partition whose read failed reports nothing.",
      attributes: partition,
    }),
    lag: histogram({
      name: 'tallyho.stream.flush.lag',
      unit: 's',
      description: 'From the oldest event of a batch being accepted to the batch being written to the log.',
      attributes: partition,
      boundaries: latencyBuckets,
    }),
    flushed: counter({
      name: 'tallyho.stream.events.flushed',
      unit: '{event}',
      description: 'Events written to the logs.',
      attributes: partition,
    }),
    flushErrors: counter({
      name: 'tallyho.stream.flush.errors',
      unit: '{error}',
      description: 'Failed attempts to write a batch (the flusher retries the same batch after a back-off).',
      attributes: partition,
    }),
    accepted: counter({
      name: 'tallyho.stream.events.accepted',
      unit: '{event}',
      description: 'Events accepted by the writers.',
      attributes: { ...partition, 'tallyho.stream.type': callerName('stream') },
    }),
    duplicates: counter({
      name: 'tallyho.stream.events.duplicates',
      unit: '{event}',
      description: "Events dropped as duplicates (a producer's sequence number the writer had accepted).",
      attributes: { ...partition, 'tallyho.stream.type': callerName('stream') },
    }),
  },
  {
    append: span({
      name: 'tallyho.stream.append',
      kind: 'producer',
      messaging: 'send',
      description:
        "An append (one request's events) handed to its type's writer; its traceparent is kept with the events until they are flushed.",
      attributes: { ...partition, 'tallyho.stream.type': callerName('stream') },
    }),
    flush: span({
      name: 'tallyho.stream.flush',
      kind: 'consumer',
      messaging: 'process',
      description: 'A batch written to the log (one attempt), linking the appends whose events it holds.',
      attributes: partition,
    }),
  },
);
