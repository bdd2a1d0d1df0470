/**
 * The poison-queue trigger's use-case. An envelope lands in `<queue>-poison` after failing every one
 * of the host's maxDequeueCount deliveries; its items are recorded as failed (insert-if-absent, so
 * items an earlier delivery did record keep their result) with the envelope's last recorded error
 * as the reason, and the job's completion is checked: a poisoned envelope never stalls its job.
 */
import type { Logger } from '../../log';
import type { Signer } from '../../signing/signer';
import { type Envelope, isClaimCheck } from '../envelopes/envelope';
import { openEnvelope } from '../envelopes/seal';
import type { Completion } from '../ledger/completion';
import type { ResultStore } from '../ledger/resultStore';
import type { JobInstruments } from '../metrics';
import type { InAppEngine } from './inApp';

export interface PoisonReport {
  readonly job: string | undefined;
  readonly envelope: string | undefined;
  readonly failed: number;
  readonly reason: string;
  readonly jobFinished: boolean;
}

export interface PoisonDeps {
  readonly results: ResultStore;
  readonly completion: Completion;
  /** What records an authentic envelope's items when this version cannot read it. */
  readonly inApp: Pick<InAppEngine, 'failUnreadable'>;
  readonly signer: () => Promise<Signer>;
  readonly logger: Logger;
  /** The capability's metrics and spans. */
  readonly instruments: JobInstruments;
}

export class PoisonHandler {
  constructor(private readonly deps: PoisonDeps) {}

  async process(text: string, queue: string): Promise<PoisonReport> {
    const opened = openEnvelope(text, await this.deps.signer());
    const { metrics, spans } = this.deps.instruments;
    if (!opened.ok && opened.authentic !== undefined) {
      // Authentic but unreadable by this version: its items are recorded failed (no processor to name).
      metrics.poisoned.add(1);
      const report = await this.deps.inApp.failUnreadable(opened.authentic, opened.reason, 0);
      metrics.items.add(report.recorded, { 'tallyho.outcome': 'poisoned' });
      return {
        job: report.job,
        envelope: report.envelope,
        failed: report.recorded,
        reason: opened.reason,
        jobFinished: report.jobFinished,
      };
    }
    if (!opened.ok) {
      metrics.poisoned.add(1);
      // Not attributable (or forged: its items must not be marked failed); keep it visible to an
      // operator rather than failing forever.
      this.deps.logger.log('error', 'jobs.poison_unreadable', { queue, reason: opened.reason, preview: text.slice(0, 200) });
      return {
        job: undefined,
        envelope: undefined,
        failed: 0,
        reason: `not a job envelope of this app: ${opened.reason}`,
        jobFinished: false,
      };
    }
    const { envelope } = opened;
    const processor = { 'tallyho.job.processor': envelope.processor };
    metrics.poisoned.add(1, processor);
    const attributes = { 'tallyho.job.id': envelope.jobId, 'tallyho.job.envelope.id': envelope.envelopeId, ...processor };
    return spans.poison.run({ attributes, ...(envelope.trace === undefined ? {} : { parent: envelope.trace }) }, async () => {
      const report = await this.failItems(envelope, queue);
      metrics.items.add(report.failed, { ...processor, 'tallyho.outcome': 'poisoned' });
      return report;
    });
  }

  /** Records the envelope's items as failed with its last error, then checks the job's completion. */
  private async failItems(envelope: Envelope, queue: string): Promise<PoisonReport> {
    const error = await this.deps.results.envelopeError(envelope.jobId, envelope.envelopeId);
    const reason =
      error === undefined
        ? `The envelope failed every delivery and reached ${queue}; no error was recorded (the worker may have crashed or timed out)`
        : `The envelope failed ${error.count} deliveries and reached ${queue}; last error: ${error.why}`;
    const items = envelope.items.map((item) => ({ id: item.id, attempts: item.attempt, claimCheck: isClaimCheck(item) }));
    const failed = await this.deps.completion.failItems(envelope, items, 'poisoned', reason);
    this.deps.logger.log('error', 'jobs.poisoned', {
      job: envelope.jobId,
      envelope: envelope.envelopeId,
      queue,
      failed: failed.recorded,
      reason,
    });
    return { job: envelope.jobId, envelope: envelope.envelopeId, failed: failed.recorded, reason, jobFinished: failed.jobFinished };
  }
}
