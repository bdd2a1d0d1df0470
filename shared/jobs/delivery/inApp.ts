/**
 * The in-app engine: processing one envelope of a work queue (one queue message, one invocation).
 * Items run with bounded concurrency; final outcomes are recorded insert-if-absent with their tally in
 * one transaction; items whose failure is retryable go back in a smaller envelope with their next
 * attempt, into a work queue's retry lane (visible after the back-off of ./itemAttempts.ts); past their attempts they are recorded as
 * failed with the reason. Then the job's completion is checked.
 *
 * What cannot be attributed to an item — a claim check that cannot be redeemed, storage down — is
 * thrown: the host redelivers the message and, after maxDequeueCount deliveries, moves it to the
 * poison queue, where ./poison.ts records the reason (kept here in an error row) for its items.
 */
import { AppError } from '../../errors';
import type { Logger } from '../../log';
import { mapLimited } from '../../mapLimited';
import type { Signer } from '../../signing/signer';
import { type Envelope, type EnvelopeItem, isClaimCheck, type JsonObject } from '../envelopes/envelope';
import type { JobFiles } from '../envelopes/files';
import { retryEnvelopeId } from '../envelopes/ids';
import { sha256Hex } from '../envelopes/input';
import { pack, queueIndexFor } from '../envelopes/packing';
import { type EnvelopeQueues, sendAll } from '../envelopes/queues';
import { openEnvelope } from '../envelopes/seal';
import type { UnreadableEnvelope } from '../envelopes/wire';
import type { Completion } from '../ledger/completion';
import { type ResultStore } from '../ledger/resultStore';
import { type ItemResult, maxOutputChars, maxReasonChars } from '../ledger/results';
import { countOutcomes, type JobInstruments } from '../metrics';
import type { ItemOutcome, JobProcessor, ProcessorRegistry } from '../processors/processor';
import type { JobSettings } from '../settings';
import { type AttemptRules, canRetry, delayBefore, gaveUp, inAppRules, owedItems } from './itemAttempts';

export interface Delivery {
  /** 1 on the first delivery; the host's DequeueCount. */
  readonly dequeueCount: number;
}

export interface EnvelopeReport {
  readonly job: string;
  readonly envelope: string;
  /** Items processed now (a redelivery skips those already final). */
  readonly processed: number;
  readonly recorded: number;
  readonly alreadyFinal: number;
  readonly retried: number;
  readonly jobFinished: boolean;
}

export interface InAppDeps {
  readonly processors: ProcessorRegistry;
  readonly results: ResultStore;
  readonly files: JobFiles;
  readonly queues: EnvelopeQueues;
  readonly completion: Completion;
  readonly settings: Pick<JobSettings, 'itemConcurrency' | 'maxAttempts' | 'retryDelaySeconds' | 'envelopeMaxItems' | 'envelopeMaxBytes'>;
  readonly signer: () => Promise<Signer>;
  readonly logger: Logger;
  /** The capability's metrics and spans. */
  readonly instruments: JobInstruments;
}

interface Ran {
  readonly item: EnvelopeItem;
  readonly line: string;
  readonly outcome: ItemOutcome;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function runItem(processor: JobProcessor, envelope: Envelope, item: EnvelopeItem, line: string): Promise<ItemOutcome> {
  try {
    const outcome = await processor.processItem(JSON.parse(line) as JsonObject, { jobId: envelope.jobId, attempt: item.attempt });
    if (outcome.ok && JSON.stringify(outcome.output).length > maxOutputChars) {
      return {
        ok: false,
        code: 'outputTooLarge',
        reason: `The processor's output is larger than ${maxOutputChars} characters`,
        retryable: false,
      };
    }
    return outcome;
  } catch (err) {
    // An exception from a processor is treated as transient: the item is retried up to the limit.
    return { ok: false, code: 'error', reason: errorText(err), retryable: true };
  }
}

function finalResult(envelope: Envelope, ran: Ran): ItemResult {
  const { item, line, outcome } = ran;
  const common = {
    id: item.id,
    attempts: item.attempt,
    envelope: envelope.envelopeId,
    payloadSha256: sha256Hex(line),
    payloadBytes: Buffer.byteLength(line, 'utf8'),
    claimCheck: isClaimCheck(item),
  };
  if (outcome.ok) return { ...common, status: 'succeeded', output: outcome.output };
  const reason = outcome.retryable ? gaveUp(outcome.reason, item.attempt) : outcome.reason;
  return { ...common, status: 'failed', code: outcome.code, reason: reason.slice(0, maxReasonChars) };
}

export class InAppEngine {
  private readonly rules: AttemptRules;

  constructor(private readonly deps: InAppDeps) {
    this.rules = inAppRules(deps.settings);
  }

  /** Processes one envelope; throws (after noting why, for the poison handler) when the whole envelope failed. */
  async process(text: string, delivery: Delivery): Promise<EnvelopeReport> {
    const opened = openEnvelope(text, await this.deps.signer());
    if (!opened.ok && opened.authentic !== undefined) return this.failUnreadable(opened.authentic, opened.reason, delivery.dequeueCount);
    if (!opened.ok) {
      // Nothing of it is acted on.
      this.deps.logger.log('error', 'jobs.envelope_rejected', { reason: opened.reason, preview: text.slice(0, 200) });
      throw new AppError('ValidationFailed', `The queue message is not a job envelope of this app: ${opened.reason}`);
    }
    const { envelope } = opened;
    const { metrics, spans } = this.deps.instruments;
    const processor = { 'tallyho.job.processor': envelope.processor };
    metrics.attempts.record(delivery.dequeueCount, processor);
    const attributes = { 'tallyho.job.id': envelope.jobId, 'tallyho.job.envelope.id': envelope.envelopeId, ...processor };
    return spans.process.run({ attributes, ...(envelope.trace === undefined ? {} : { parent: envelope.trace }) }, () =>
      this.runNoting(envelope, delivery),
    );
  }

  /**
   * An envelope this app sealed that it cannot process (a version it does not understand): its items
   * are recorded as failed with the reason rather than left to stall the job.
   */
  async failUnreadable(head: UnreadableEnvelope, why: string, attempts: number): Promise<EnvelopeReport> {
    const items = head.itemIds.map((id) => ({ id, attempts, claimCheck: false }));
    const failed = await this.deps.completion.failItems(head, items, 'unprocessable', `The envelope cannot be processed: ${why}`);
    this.deps.logger.log('error', 'jobs.envelope_unprocessable', {
      job: head.jobId,
      envelope: head.envelopeId,
      reason: why,
      failed: failed.recorded,
    });
    return {
      job: head.jobId,
      envelope: head.envelopeId,
      processed: 0,
      recorded: failed.recorded,
      alreadyFinal: failed.alreadyFinal,
      retried: 0,
      jobFinished: failed.jobFinished,
    };
  }

  /** Runs the envelope; on failure notes why (for the poison handler) and throws for the host to redeliver. */
  private async runNoting(envelope: Envelope, delivery: Delivery): Promise<EnvelopeReport> {
    const { results, logger } = this.deps;
    try {
      return await this.run(envelope, delivery);
    } catch (err) {
      const { jobId: job, envelopeId } = envelope;
      await results.recordEnvelopeError(job, envelopeId, errorText(err), delivery.dequeueCount).catch((noted: unknown) => {
        logger.log('warn', 'jobs.envelope_error_not_recorded', { job, envelope: envelopeId, error: noted });
      });
      logger.log('warn', 'jobs.envelope_failed', { job, envelope: envelopeId, dequeueCount: delivery.dequeueCount, error: err });
      throw err;
    }
  }

  private async run(envelope: Envelope, delivery: Delivery): Promise<EnvelopeReport> {
    const { deps } = this;
    const processor = deps.processors.get(envelope.processor);
    if (processor === undefined)
      throw new AppError(
        'ConfigurationInvalid',
        `Envelope ${envelope.envelopeId} of job ${envelope.jobId} names processor ${envelope.processor}, which this app does not have`,
      );
    const redelivered = delivery.dequeueCount > 1;
    // A redelivery (or a duplicate of this envelope) skips what an earlier one recorded.
    const items = redelivered ? await owedItems(deps.results, envelope.jobId, envelope.round, envelope.items) : envelope.items;
    const ran = await this.runItems(processor, envelope, items);
    const retries = ran
      .filter((r) => !r.outcome.ok && r.outcome.retryable && canRetry(this.rules, r.item.attempt))
      .map((r) => ({ ...r.item, attempt: r.item.attempt + 1 }));
    const finals = ran
      .filter((r) => r.outcome.ok || !r.outcome.retryable || !canRetry(this.rules, r.item.attempt))
      .map((r) => finalResult(envelope, r));
    // A first delivery of a submission envelope finds no rows: try the one-transaction insert first.
    const recorded = await deps.results.record(envelope.jobId, envelope.round, finals, !redelivered && envelope.round === 0);
    if (retries.length > 0) await this.sendRetries(envelope, retries);
    this.count(envelope, finals, retries.length);
    const jobFinished = await deps.completion.check(envelope.jobId, envelope.jobItems);
    return {
      job: envelope.jobId,
      envelope: envelope.envelopeId,
      processed: items.length,
      recorded: recorded.recorded,
      alreadyFinal: recorded.alreadyFinal + (envelope.items.length - items.length),
      retried: retries.length,
      jobFinished,
    };
  }

  private async runItems(processor: JobProcessor, envelope: Envelope, items: readonly EnvelopeItem[]): Promise<Ran[]> {
    const { files, settings } = this.deps;
    const concurrency = settings.itemConcurrency;
    const lines = await mapLimited(items, concurrency, (item) =>
      isClaimCheck(item) ? files.redeem(item.claimCheck) : Promise.resolve(JSON.stringify(item.data)),
    );
    return mapLimited(
      items.map((item, i) => ({ item, line: lines[i] as string })),
      concurrency,
      async ({ item, line }) => ({ item, line, outcome: await runItem(processor, envelope, item, line) }),
    );
  }

  /**
   * Items failed retryably go back in smaller envelopes, one set per attempt, after that attempt's
   * back-off, into a work queue's retry lane (../envelopes/queues.ts): there they come back on
   * time, never behind the work queues' backlog.
   */
  private async sendRetries(envelope: Envelope, retries: readonly EnvelopeItem[]): Promise<void> {
    const { queues, settings } = this.deps;
    const byAttempt = new Map<number, EnvelopeItem[]>();
    for (const item of retries) byAttempt.set(item.attempt, [...(byAttempt.get(item.attempt) ?? []), item]);
    for (const [attempt, items] of byAttempt) {
      const base = retryEnvelopeId(envelope.envelopeId, attempt);
      const { jobId, processor, round, jobItems, trace } = envelope;
      const limits = { maxItems: settings.envelopeMaxItems, maxBytes: settings.envelopeMaxBytes };
      const envelopes = pack({ jobId, processor, round, jobItems, trace }, items, limits, (k) => (k === 0 ? base : `${base}-${k}`));
      const delay = delayBefore(this.rules, attempt);
      await sendAll(
        envelopes.map((e) => queues.send(queues.workLane(queueIndexFor(`${e.jobId}/${e.envelopeId}`, 0, queues.count)), e, delay)),
      );
    }
  }

  private count(envelope: Envelope, finals: readonly ItemResult[], retried: number): void {
    countOutcomes(this.deps.instruments, envelope.processor, finals, retried);
  }
}
