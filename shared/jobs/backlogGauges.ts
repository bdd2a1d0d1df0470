/**
 * The backlog gauges of the jobs capability: the work queues' (with their retry lanes) and the
 * declared processors', read from the queues when the metrics are collected.
 */
import type { Clock } from '../clock';
import type { JobReads } from './http/reads';
import { poisonQueueName } from './queueNames';
import type { JobInstruments } from './metrics';

/**
 * Each collection reads the queues (a few requests a minute): the backlog is the queues', the same
 * whichever instance reports it. One read serves every gauge of a collection (they ask within
 * moments of each other); a failed read reports nothing that time, never a stale value.
 */
export function observeBacklog({ metrics }: JobInstruments, reads: Pick<JobReads, 'backlog' | 'processorBacklogs'>, clock: Clock): void {
  const depths = sharedRead(() => reads.backlog());
  const declared = sharedRead(() => reads.processorBacklogs());
  const ageOf = (queuedAt: number | undefined): number => (queuedAt === undefined ? 0 : Math.max(0, (clock.now() - queuedAt) / 1000));
  metrics.backlog.observe(async (report) => {
    for (const d of await depths()) report(d.messages, { 'messaging.destination.name': d.queue });
  });
  metrics.backlogAge.observe(async (report) => {
    for (const d of await depths()) report(ageOf(d.oldestQueuedAt), { 'messaging.destination.name': d.queue });
  });
  metrics.poisonBacklog.observe(async (report) => {
    for (const d of await depths()) report(d.poison, { 'messaging.destination.name': poisonQueueName(d.queue) });
  });
  metrics.processorBacklog.observe(async (report) => {
    for (const p of await declared()) report(p.backlog, { 'tallyho.job.processor': p.processor });
  });
  metrics.processorBacklogAge.observe(async (report) => {
    for (const p of await declared()) report(p.oldestAgeSeconds, { 'tallyho.job.processor': p.processor });
  });
  metrics.processorLeased.observe(async (report) => {
    for (const p of await declared()) if (p.leased !== null) report(p.leased, { 'tallyho.job.processor': p.processor });
  });
}

/**
 * `read` once for the gauges of one collection: the reader calls their callbacks together, so a call
 * while a read is in flight shares it; the next collection reads again (never an earlier answer). A
 * failure answers [].
 */
function sharedRead<T>(read: () => Promise<T[]>): () => Promise<T[]> {
  let pending: Promise<T[]> | undefined;
  return () => {
    pending ??= read()
      .catch(() => [])
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };
}
