/**
 * The poison-queue trigger's use-case. An envelope lands in `<queue>-poison` after failing every one
 * of the host's maxDequeueCount deliveries; its items are recorded as failed (insert-if-absent, so
 * items an earlier delivery did record keep their result) with the envelope's last recorded error
 * as the reason, and the job's completion is checked: a poisoned envelope never stalls its job.
 */
import { checkCompletion } from '../ledger/complete';
import { type JobsContext, jobsTelemetry } from '../context';
import { type Envelope, isClaimCheck } from '../envelopes/envelope';
import type { ItemResult } from '../ledger/resultStore';
import { openEnvelope } from '../envelopes/seal';
import { failUnprocessable } from './process';

export interface PoisonReport {
  readonly job: string | undefined;
  readonly envelope: string | undefined;
  readonly failed: number;
  readonly reason: string;
  readonly jobFinished: boolean;
}

export async function processPoison(ctx: JobsContext, text: string, queue: string): Promise<PoisonReport> {
  const opened = openEnvelope(text, await ctx.signer());
  const { metrics, spans } = jobsTelemetry(ctx);
  if (!opened.ok && opened.authentic !== undefined) {
    // Authentic but unreadable by this version: its items are recorded failed (no processor to name).
    metrics.poisoned.add(1);
    const report = await failUnprocessable(ctx, opened.authentic, opened.reason, 0);
    metrics.items.add(report.recorded, { 'tallyho.outcome': 'poisoned' });
    return { job: report.job, envelope: report.envelope, failed: report.recorded, reason: opened.reason, jobFinished: report.jobFinished };
  }
  if (!opened.ok) {
    metrics.poisoned.add(1);
    // Not attributable (or forged: its items must not be marked failed); keep it visible to an
    // operator rather than failing forever.
    ctx.logger.log('error', 'jobs.poison_unreadable', { queue, reason: opened.reason, preview: text.slice(0, 200) });
    return {
      job: undefined,
      envelope: undefined,
      failed: 0,
      reason: `not a job envelope of this app: ${opened.reason}`,
      jobFinished: false,
    };
  }
  const { envelope } = opened;
  const processor = { 'tallyho.job.processor': envelope.p };
  metrics.poisoned.add(1, processor);
  const attributes = { 'tallyho.job.id': envelope.j, 'tallyho.job.envelope.id': envelope.e, ...processor };
  return spans.poison.run({ attributes, ...(envelope.t === undefined ? {} : { parent: envelope.t }) }, async () => {
    const report = await failItems(ctx, envelope, queue);
    metrics.items.add(report.failed, { ...processor, 'tallyho.outcome': 'poisoned' });
    return report;
  });
}

/** Records the envelope's items as failed with its last error, then checks the job's completion. */
async function failItems(ctx: JobsContext, envelope: Envelope, queue: string): Promise<PoisonReport> {
  const error = await ctx.results.envelopeError(envelope.j, envelope.e);
  const reason =
    error === undefined
      ? `The envelope failed every delivery and reached ${queue}; no error was recorded (the worker may have crashed or timed out)`
      : `The envelope failed ${error.count} deliveries and reached ${queue}; last error: ${error.why}`;
  const results: ItemResult[] = envelope.i.map((entry) => ({
    id: entry.id,
    status: 'failed',
    code: 'poisoned',
    reason: reason.slice(0, 1000),
    attempts: entry.a,
    envelope: envelope.e,
    claimCheck: isClaimCheck(entry),
  }));
  const recorded = await ctx.results.record(envelope.j, envelope.r, results, false);
  ctx.logger.log('error', 'jobs.poisoned', { job: envelope.j, envelope: envelope.e, queue, failed: recorded.recorded, reason });
  const jobFinished = await checkCompletion(ctx, envelope.j, envelope.n);
  return { job: envelope.j, envelope: envelope.e, failed: recorded.recorded, reason, jobFinished };
}
