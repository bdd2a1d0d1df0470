/**
 * A lease handed to a worker is traced as the OpenTelemetry messaging conventions trace a receive: a
 * `tallyho.job.lease` span (kind consumer, `messaging.operation.type` receive), a child of the lease
 * request's span (the host's, or the worker's own when its request carried a traceparent), linked to
 * the context each envelope carries — the job's submission. It spans the message's receipt to the
 * lease. The lease answer carries its traceparent, so a worker's own spans continue it (as parent)
 * while each item's traceparent (the submission's) is theirs to link, as the conventions have a
 * consumer's process span do.
 */
import type { JobInstruments } from '../metrics';
import type { Granted } from './leaseTerms';

export type TracedLease = Granted & {
  /** The lease span's W3C traceparent (absent without tracing). */
  readonly traceparent?: string;
};

/** `granted` in its lease span, begun when its message was received (`receivedAt`, epoch ms). */
export function traceLease(instruments: JobInstruments, granted: Granted, receivedAt: number): Promise<TracedLease> {
  const { lease, envelope } = granted;
  const attributes = {
    'tallyho.job.id': lease.jobId,
    'tallyho.job.envelope.id': lease.envelope,
    'tallyho.job.processor': lease.processor,
    'messaging.destination.name': lease.queue,
  } as const;
  const links = envelope.trace === undefined ? [] : [envelope.trace];
  return instruments.spans.lease.run({ attributes, links, inRequest: true, startTime: receivedAt }, (span) => {
    const traceparent = span.traceparent();
    return Promise.resolve(traceparent === undefined ? granted : { ...granted, traceparent });
  });
}
