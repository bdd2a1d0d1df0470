/**
 * Processing one envelope (one queue message, one invocation). Items run with bounded concurrency;
 * final outcomes are recorded insert-if-absent with their tally in one transaction; items whose
 * failure is retryable go back in a smaller envelope with their attempt count (visible after a
 * back-off); past TALLYHO_JOBS_MAX_ATTEMPTS they are recorded as failed with the reason. Then the
 * job's completion is checked.
 *
 * What cannot be attributed to an item — a claim check that cannot be redeemed, storage down — is
 * thrown: the host redelivers the message and, after maxDequeueCount deliveries, moves it to the
 * poison queue, where `processPoison` records the reason (kept here in an error row) for its items.
 */
import { mapLimited } from '../../mapLimited';
import { AppError } from '../../errors';
import { checkCompletion } from '../ledger/complete';
import { type JobsContext, jobsTelemetry } from '../context';
import { type Envelope, type EnvelopeEntry, isClaimCheck, type JsonObject } from '../envelopes/envelope';
import { retryEnvelopeId } from '../envelopes/ids';
import { sha256Hex } from '../envelopes/input';
import { pack, queueIndexFor } from '../envelopes/packing';
import type { ItemOutcome, JobProcessor } from '../processors/processor';
import { sendAll } from '../envelopes/queues';
import { type EnvelopeHeader, openEnvelope } from '../envelopes/seal';
import { type ItemResult, maxOutputChars, maxReasonChars } from '../ledger/resultStore';

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

interface Ran {
  readonly entry: EnvelopeEntry;
  readonly line: string;
  readonly outcome: ItemOutcome;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function runItem(processor: JobProcessor, envelope: Envelope, entry: EnvelopeEntry, line: string): Promise<ItemOutcome> {
  try {
    const outcome = await processor.processItem(JSON.parse(line) as JsonObject, { jobId: envelope.j, attempt: entry.a });
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
  const { entry, line, outcome } = ran;
  const common = {
    id: entry.id,
    attempts: entry.a,
    envelope: envelope.e,
    payloadSha256: sha256Hex(line),
    payloadBytes: Buffer.byteLength(line, 'utf8'),
    claimCheck: isClaimCheck(entry),
  };
  if (outcome.ok) return { ...common, status: 'succeeded', output: outcome.output };
  const reason = outcome.retryable ? `${outcome.reason} (gave up after ${entry.a} attempts)` : outcome.reason;
  return { ...common, status: 'failed', code: outcome.code, reason: reason.slice(0, maxReasonChars) };
}

async function sendRetries(ctx: JobsContext, envelope: Envelope, retries: readonly EnvelopeEntry[]): Promise<void> {
  const byAttempt = new Map<number, EnvelopeEntry[]>();
  for (const entry of retries) byAttempt.set(entry.a, [...(byAttempt.get(entry.a) ?? []), entry]);
  for (const [attempt, entries] of byAttempt) {
    const base = retryEnvelopeId(envelope.e, attempt);
    const header = { jobId: envelope.j, processor: envelope.p, round: envelope.r, jobItems: envelope.n, trace: envelope.t };
    const limits = { maxItems: ctx.settings.envelopeMaxItems, maxBytes: ctx.settings.envelopeMaxBytes };
    const envelopes = pack(header, entries, limits, (k) => (k === 0 ? base : `${base}-${k}`));
    // Back-off doubles per attempt: the first retry waits TALLYHO_JOBS_RETRY_DELAY_SECONDS.
    const delay = Math.min(ctx.settings.retryDelaySeconds * 2 ** (attempt - 2), 7 * 24 * 3600);
    await sendAll(
      envelopes.map((e) => ctx.queues.send(ctx.queues.workQueue(queueIndexFor(`${e.j}/${e.e}`, 0, ctx.queues.count)), e, delay)),
    );
  }
}

async function run(ctx: JobsContext, envelope: Envelope, delivery: Delivery): Promise<EnvelopeReport> {
  const processor = ctx.processors.get(envelope.p);
  if (processor === undefined)
    throw new AppError(
      'ConfigurationInvalid',
      `Envelope ${envelope.e} of job ${envelope.j} names processor ${envelope.p}, which this app does not have`,
    );
  const redelivered = delivery.dequeueCount > 1;
  let entries = envelope.i;
  if (redelivered) {
    // Skip what an earlier delivery (or a duplicate of this envelope) already recorded.
    const rows = await ctx.results.readRows(
      envelope.j,
      entries.map((e) => e.id),
    );
    entries = entries.filter((e) => {
      const row = rows.get(e.id);
      return row === undefined || (row.status === 'retrying' && row.round <= envelope.r);
    });
  }
  const concurrency = ctx.settings.itemConcurrency;
  const lines = await mapLimited(entries, concurrency, (e) =>
    isClaimCheck(e) ? ctx.files.redeem(e.c) : Promise.resolve(JSON.stringify(e.d)),
  );
  const ran: Ran[] = await mapLimited(
    entries.map((entry, i) => ({ entry, line: lines[i] as string })),
    concurrency,
    async ({ entry, line }) => ({ entry, line, outcome: await runItem(processor, envelope, entry, line) }),
  );
  const retries = ran
    .filter((r) => !r.outcome.ok && r.outcome.retryable && r.entry.a < ctx.settings.maxAttempts)
    .map((r) => ({ ...r.entry, a: r.entry.a + 1 }));
  const finals = ran
    .filter((r) => r.outcome.ok || !r.outcome.retryable || r.entry.a >= ctx.settings.maxAttempts)
    .map((r) => finalResult(envelope, r));
  // A first delivery of a submission envelope finds no rows: try the one-transaction insert first.
  const recorded = await ctx.results.record(envelope.j, envelope.r, finals, !redelivered && envelope.r === 0);
  if (retries.length > 0) await sendRetries(ctx, envelope, retries);
  const { items } = jobsTelemetry(ctx).metrics;
  const by = { 'tallyho.job.processor': envelope.p };
  const succeeded = finals.filter((f) => f.status === 'succeeded').length;
  items.add(succeeded, { ...by, 'tallyho.outcome': 'succeeded' });
  items.add(finals.length - succeeded, { ...by, 'tallyho.outcome': 'failed' });
  items.add(retries.length, { ...by, 'tallyho.outcome': 'retried' });
  const jobFinished = await checkCompletion(ctx, envelope.j, envelope.n);
  return {
    job: envelope.j,
    envelope: envelope.e,
    processed: entries.length,
    recorded: recorded.recorded,
    alreadyFinal: recorded.alreadyFinal + (envelope.i.length - entries.length),
    retried: retries.length,
    jobFinished,
  };
}

/**
 * An envelope this app sealed that it cannot process (a version it does not understand): its items
 * are recorded as failed with the reason rather than left to stall the job.
 */
export async function failUnprocessable(ctx: JobsContext, head: EnvelopeHeader, why: string, attempts: number): Promise<EnvelopeReport> {
  const results: ItemResult[] = head.ids.map((id) => ({
    id,
    status: 'failed',
    code: 'unprocessable',
    reason: `The envelope cannot be processed: ${why}`.slice(0, maxReasonChars),
    attempts,
    envelope: head.e,
    claimCheck: false,
  }));
  const recorded = await ctx.results.record(head.j, head.r, results, false);
  ctx.logger.log('error', 'jobs.envelope_unprocessable', { job: head.j, envelope: head.e, reason: why, failed: recorded.recorded });
  const jobFinished = await checkCompletion(ctx, head.j, head.n);
  return {
    job: head.j,
    envelope: head.e,
    processed: 0,
    recorded: recorded.recorded,
    alreadyFinal: recorded.alreadyFinal,
    retried: 0,
    jobFinished,
  };
}

/** Processes one envelope; throws (after noting why, for the poison handler) when the whole envelope failed. */
export async function processEnvelope(ctx: JobsContext, text: string, delivery: Delivery): Promise<EnvelopeReport> {
  const opened = openEnvelope(text, await ctx.signer());
  if (!opened.ok && opened.authentic !== undefined) return failUnprocessable(ctx, opened.authentic, opened.reason, delivery.dequeueCount);
  if (!opened.ok) {
    // Nothing of it is acted on; after the host's retries it lands in the poison queue, whose handler logs it too.
    ctx.logger.log('error', 'jobs.envelope_rejected', { reason: opened.reason, preview: text.slice(0, 200) });
    throw new AppError('ValidationFailed', `The queue message is not a job envelope of this app: ${opened.reason}`);
  }
  const { envelope } = opened;
  const { metrics, spans } = jobsTelemetry(ctx);
  const processor = { 'tallyho.job.processor': envelope.p };
  metrics.attempts.record(delivery.dequeueCount, processor);
  const attributes = { 'tallyho.job.id': envelope.j, 'tallyho.job.envelope.id': envelope.e, ...processor };
  return spans.process.run({ attributes, ...(envelope.t === undefined ? {} : { parent: envelope.t }) }, () =>
    runNoting(ctx, envelope, delivery),
  );
}

/** Runs the envelope; on failure notes why (for the poison handler) and throws for the host to redeliver. */
async function runNoting(ctx: JobsContext, envelope: Envelope, delivery: Delivery): Promise<EnvelopeReport> {
  try {
    return await run(ctx, envelope, delivery);
  } catch (err) {
    await ctx.results.recordEnvelopeError(envelope.j, envelope.e, errorText(err), delivery.dequeueCount).catch((noted: unknown) => {
      ctx.logger.log('warn', 'jobs.envelope_error_not_recorded', { job: envelope.j, envelope: envelope.e, error: noted });
    });
    ctx.logger.log('warn', 'jobs.envelope_failed', {
      job: envelope.j,
      envelope: envelope.e,
      dequeueCount: delivery.dequeueCount,
      error: err,
    });
    throw err;
  }
}
