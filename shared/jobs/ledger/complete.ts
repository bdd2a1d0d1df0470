/**
 * Completion. A job is complete when its tally rows count a final result for every item. The
 * transition is a chain of conditional writes on the job row, each won by exactly one caller:
 * `enqueued` -> `finalizing` (the winner holds a lease and becomes the single writer of the
 * reduce: it runs the processor's finalize step) -> `completed` / `completedWithFailures` with the
 * counts, the summary and the event marked pending -> the event published -> the job leaves the
 * open index. A crash between any two steps leaves a state the reconciler (or the next envelope
 * of the job) continues from; a finalizer that lost its lease cannot complete the job.
 */
import { AppError } from '../../errors';
import { LostRace, retryLostRaces, retryContextOf } from '../../retry';
import { type JobsContext, jobsTelemetry } from '../context';
import type { JsonObject } from '../envelopes/envelope';
import { isFinished, type JobRecord, type StoredJob } from './jobRecord';
import type { FinalizeContext } from '../processors/processor';
import { settledCount } from './resultStore';

function finalizeContext(ctx: JobsContext, job: JobRecord): FinalizeContext {
  return {
    jobId: job.id,
    round: job.round,
    async *outputs() {
      for await (const result of ctx.results.all(job.id, 'succeeded')) {
        if (result.output !== undefined) yield { id: result.id, output: result.output };
      }
    },
    writeFile: (name, contentType, body) => ctx.files.writeFile(job.id, name, contentType, body),
  };
}

/** A finished job with nothing left owed: it leaves the open index and starts its retention time. */
export async function closeJob(ctx: JobsContext, job: JobRecord): Promise<void> {
  await ctx.jobs.markFinished(job.id, job.completedAt ?? ctx.clock.now());
  await ctx.jobs.clearOpen(job.id);
}

/** True while a completed job still owes its delivery or its event. */
export function hasPendingOutput(job: JobRecord): boolean {
  return job.delivery === 'pending' || job.event === 'pending';
}

async function note(ctx: JobsContext, stored: StoredJob, change: Partial<JobRecord>): Promise<StoredJob | undefined> {
  try {
    return await ctx.jobs.update({ ...stored.job, ...change, updatedAt: ctx.clock.now() }, stored.etag);
  } catch (err) {
    // Someone else recorded it (or retry-failed moved on): their write stands.
    if (err instanceof LostRace) return undefined;
    throw err;
  }
}

/**
 * The steps after completion, in order: the processor's delivery, then the JobCompleted event,
 * then leaving the open index. Each is noted on the job once done; a failure is logged and leaves
 * it pending for the reconciler, so a Service Bus or streams outage never un-completes a job.
 */
export async function finishOutputs(ctx: JobsContext, stored: StoredJob): Promise<StoredJob> {
  let current = stored;
  const { job } = current;
  if (job.delivery === 'pending') {
    const processor = ctx.processors.get(job.processor);
    let outcome: 'delivered' | 'notConfigured';
    try {
      outcome =
        processor?.deliver === undefined
          ? 'notConfigured'
          : await processor.deliver({
              jobId: job.id,
              round: job.round,
              readFile: async (name) => (await ctx.files.readFile(job.id, name))?.body.toString('utf8'),
            });
    } catch (err) {
      ctx.logger.log('error', 'jobs.delivery_failed', { job: job.id, round: job.round, error: err });
      return current;
    }
    const next = await note(ctx, current, { delivery: outcome });
    if (next === undefined) return (await ctx.jobs.read(job.id)) ?? current;
    current = next;
  }
  if (current.job.event === 'pending') {
    let outcome: 'published' | 'notConfigured';
    try {
      outcome = await ctx.events.publish(current.job);
    } catch (err) {
      ctx.logger.log('error', 'jobs.event_failed', { job: job.id, round: job.round, error: err });
      return current;
    }
    const next = await note(ctx, current, { event: outcome });
    if (next === undefined) return (await ctx.jobs.read(job.id)) ?? current;
    current = next;
    ctx.logger.log('info', 'jobs.event', { job: job.id, round: job.round, event: outcome });
  }
  if (isFinished(current.job.phase) && !hasPendingOutput(current.job)) await closeJob(ctx, current.job);
  return current;
}

type Attempt =
  | { readonly kind: 'notYet' | 'busy'; readonly stored: StoredJob }
  | { readonly kind: 'claimed'; readonly stored: StoredJob; readonly lease: string };

/** Reads the job, then the progress (in that order: see below), and claims finalization if due. */
async function claimFinalize(ctx: JobsContext, jobId: string): Promise<Attempt | { kind: 'done'; stored: StoredJob }> {
  const stored = await ctx.jobs.read(jobId);
  if (stored === undefined) throw new AppError('NotFound', `Job ${jobId} does not exist`);
  const { job } = stored;
  const now = ctx.clock.now();
  if (isFinished(job.phase)) return { kind: 'done', stored };
  // Retry-failed re-opens rows before `marked`; until then the old counts would look complete.
  if (job.round > 0 && !job.marked) return { kind: 'notYet', stored };
  if (job.phase === 'finalizing' && job.leaseUntil > now) return { kind: 'busy', stored };
  // Progress is read after the job: a round change re-opens rows only after changing the job, so
  // the conditional claim below fails if the counts read here might be from before one.
  const progress = await ctx.results.progress(jobId);
  if (settledCount(progress) < job.items) return { kind: 'notYet', stored };
  const lease = ctx.newLease();
  const claimed = await ctx.jobs.update(
    {
      ...job,
      phase: 'finalizing',
      lease,
      leaseUntil: now + ctx.settings.staleSeconds * 1000,
      succeeded: progress.succeeded,
      failed: progress.failed,
      cancelled: progress.cancelled,
      startedAt: job.startedAt ?? progress.firstAt,
      lastResultAt: progress.lastAt,
      updatedAt: now,
    },
    stored.etag,
  );
  return { kind: 'claimed', stored: claimed, lease };
}

/**
 * Completes the job if every item has a final result. Returns the job as it now is. Safe to call
 * any number of times from anywhere: only one caller finalizes, the rest return.
 */
export async function completeIfDone(ctx: JobsContext, jobId: string): Promise<StoredJob> {
  const attempt = await retryLostRaces(retryContextOf(ctx, `job ${jobId}`), () => claimFinalize(ctx, jobId));
  if (attempt.kind === 'done') return attempt.stored;
  if (attempt.kind !== 'claimed') return attempt.stored;
  const { job } = attempt.stored;
  const { spans } = jobsTelemetry(ctx);
  const attributes = { 'tallyho.job.id': job.id, 'tallyho.job.processor': job.processor };
  // In the submission's trace, wherever the completion runs (an envelope, the reconciler).
  return spans.complete.run({ attributes, ...(job.trace === undefined ? {} : { parent: job.trace }) }, () => finalize(ctx, attempt.stored));
}

/** The claimed finalization: the processor's reduce (none for a cancelled job), the completed row, then the outputs. */
async function finalize(ctx: JobsContext, claimed: StoredJob): Promise<StoredJob> {
  const { job } = claimed;
  const jobId = job.id;
  const cancelled = job.cancelledAt !== null;
  // Only an in-app processor has a reduce step; a declared one's items were its workers' to handle.
  const processor = cancelled ? undefined : ctx.processors.get(job.processor);
  if (processor === undefined && !cancelled && job.queue === '')
    throw new AppError('ConfigurationInvalid', `Job ${jobId} uses processor ${job.processor}, which this app does not have`);
  const summary: JsonObject | null = processor === undefined ? null : await processor.finalize(finalizeContext(ctx, job));
  const now = ctx.clock.now();
  let completed: StoredJob;
  try {
    completed = await ctx.jobs.update(
      {
        ...job,
        phase: cancelled ? 'cancelled' : (job.failed ?? 0) > 0 ? 'completedWithFailures' : 'completed',
        completedAt: now,
        summary,
        delivery: processor?.deliver === undefined ? 'notConfigured' : 'pending',
        event: 'pending',
        lease: '',
        leaseUntil: 0,
        updatedAt: now,
      },
      claimed.etag,
    );
  } catch (err) {
    // Our lease ran out and another finalizer took over: it completes the job.
    if (err instanceof LostRace) return (await ctx.jobs.read(jobId)) ?? claimed;
    throw err;
  }
  // The place among TALLYHO_JOBS_MAX_OPEN goes back now, before the delivery and the event: a job
  // waiting on those (a streams or Service Bus outage) holds no caller's place.
  await ctx.slots.release(jobId);
  const state = cancelled ? 'cancelled' : completed.job.phase === 'completed' ? 'completed' : 'completedWithFailures';
  jobsTelemetry(ctx).metrics.completed.add(1, { 'tallyho.job.processor': job.processor, 'tallyho.job.state': state });
  ctx.logger.log('info', 'jobs.completed', {
    job: jobId,
    round: job.round,
    state: completed.job.phase,
    succeeded: job.succeeded,
    failed: job.failed,
    durationMs: now - job.acceptedAt,
  });
  return finishOutputs(ctx, completed);
}

/** The cheap check an envelope runs after recording: one tally query; the job row only once all items are final. */
export async function checkCompletion(ctx: JobsContext, jobId: string, items: number): Promise<boolean> {
  const progress = await ctx.results.progress(jobId);
  if (settledCount(progress) < items) return false;
  return isFinished((await completeIfDone(ctx, jobId)).job.phase);
}
