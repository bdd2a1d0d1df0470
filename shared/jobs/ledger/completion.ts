/**
 * Completion. A job is complete when its tally rows count a final result for every item. The
 * transition is a chain of conditional writes on the job row, each won by exactly one caller:
 * `enqueued` -> `finalizing` (the winner holds a lease and becomes the single writer of the
 * reduce: it runs the processor's finalize step) -> `completed` / `completedWithFailures` with the
 * counts, the summary and the event marked pending -> the processor's hand-on (./outputs.ts) -> the
 * event published -> the job leaves the open index. A crash between any two steps leaves a state the
 * reconciler (or the next envelope of the job) continues from; a finalizer that lost its lease
 * cannot complete the job.
 */
import type { Clock } from '../../clock';
import { AppError } from '../../errors';
import type { Logger } from '../../log';
import { type BackoffPolicy, LostRace, retryContextOf, retryLostRaces } from '../../retry';
import type { JobFiles } from '../envelopes/files';
import type { JsonObject } from '../envelopes/envelope';
import type { JobInstruments } from '../metrics';
import type { FinalizeContext, ProcessorRegistry } from '../processors/processor';
import { isFinished, type JobRecord, type StoredJob } from './jobRecord';
import type { OpenSlots } from './jobRows';
import type { JobStore } from './jobStore';
import type { Outputs } from './outputs';
import { type ResultStore } from './resultStore';
import { type ItemResult, maxReasonChars, settledCount } from './results';

export interface CompletionDeps {
  readonly jobs: JobStore;
  readonly results: ResultStore;
  readonly files: JobFiles;
  /** The in-app processors (only they have a reduce step). */
  readonly processors: ProcessorRegistry;
  readonly slots: OpenSlots;
  readonly outputs: Outputs;
  /** A finalization idle this long is taken over (TALLYHO_JOBS_STALE_SECONDS). */
  readonly staleSeconds: number;
  readonly newLease: () => string;
  readonly clock: Clock;
  readonly random: () => number;
  readonly logger: Logger;
  readonly backoff: BackoffPolicy;
  /** The capability's metrics and spans. */
  readonly instruments: JobInstruments;
}

/** The job of an envelope, and which round: what a result is recorded against. */
export interface ResultsOf {
  readonly jobId: string;
  readonly envelopeId: string;
  readonly round: number;
  readonly jobItems: number;
}

type Attempt =
  | { readonly kind: 'notYet' | 'busy' | 'done'; readonly stored: StoredJob }
  | { readonly kind: 'claimed'; readonly stored: StoredJob; readonly lease: string };

export class Completion {
  constructor(private readonly deps: CompletionDeps) {}

  /** The cheap check after recording: one tally query; the job row only once all items are final. */
  async check(jobId: string, items: number): Promise<boolean> {
    const progress = await this.deps.results.progress(jobId);
    if (settledCount(progress) < items) return false;
    return isFinished((await this.completeIfDone(jobId)).job.phase);
  }

  /**
   * Records items as failed with `reason` (insert-if-absent: an item with a result keeps it) and checks
   * the job: nothing of an authentic envelope is dropped unrecorded.
   */
  async failItems(
    of: ResultsOf,
    items: readonly { id: string; attempts: number; claimCheck: boolean }[],
    code: string,
    reason: string,
  ): Promise<{ recorded: number; alreadyFinal: number; jobFinished: boolean }> {
    const results: ItemResult[] = items.map((item) => ({
      id: item.id,
      status: 'failed',
      code,
      reason: reason.slice(0, maxReasonChars),
      attempts: item.attempts,
      envelope: of.envelopeId,
      claimCheck: item.claimCheck,
    }));
    const recorded =
      results.length > 0 ? await this.deps.results.record(of.jobId, of.round, results, false) : { recorded: 0, alreadyFinal: 0 };
    const jobFinished = await this.check(of.jobId, of.jobItems);
    return { recorded: recorded.recorded, alreadyFinal: recorded.alreadyFinal, jobFinished };
  }

  /**
   * Completes the job if every item has a final result. Returns the job as it now is. Safe to call
   * any number of times from anywhere: only one caller finalizes, the rest return.
   */
  async completeIfDone(jobId: string): Promise<StoredJob> {
    const attempt = await retryLostRaces(retryContextOf(this.deps, `job ${jobId}`), () => this.claimFinalize(jobId));
    if (attempt.kind !== 'claimed') return attempt.stored;
    const { job } = attempt.stored;
    const attributes = { 'tallyho.job.id': job.id, 'tallyho.job.processor': job.processor };
    // In the submission's trace, wherever the completion runs (an envelope, the reconciler).
    return this.deps.instruments.spans.complete.run({ attributes, ...(job.trace === undefined ? {} : { parent: job.trace }) }, () =>
      this.finalize(attempt.stored),
    );
  }

  /** Reads the job, then the progress (in that order: see below), and claims finalization if due. */
  private async claimFinalize(jobId: string): Promise<Attempt> {
    const { deps } = this;
    const stored = await deps.jobs.read(jobId);
    if (stored === undefined) throw new AppError('NotFound', `Job ${jobId} does not exist`);
    const { job } = stored;
    const now = deps.clock.now();
    if (isFinished(job.phase)) return { kind: 'done', stored };
    // Retry-failed re-opens rows before `marked`; until then the old counts would look complete.
    if (job.round > 0 && !job.marked) return { kind: 'notYet', stored };
    if (job.phase === 'finalizing' && job.leaseUntil > now) return { kind: 'busy', stored };
    // Progress is read after the job: a round change re-opens rows only after changing the job, so
    // the conditional claim below fails if the counts read here might be from before one.
    const progress = await deps.results.progress(jobId);
    if (settledCount(progress) < job.items) return { kind: 'notYet', stored };
    const lease = deps.newLease();
    const claimed = await deps.jobs.update(
      {
        ...job,
        phase: 'finalizing',
        lease,
        leaseUntil: now + deps.staleSeconds * 1000,
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

  /** The claimed finalization: the processor's reduce (none for a cancelled job), the completed row, then the outputs. */
  private async finalize(claimed: StoredJob): Promise<StoredJob> {
    const { deps } = this;
    const { job } = claimed;
    const cancelled = job.cancelledAt !== null;
    // Only an in-app processor has a reduce step; a declared one's items were its workers' to handle.
    const processor = cancelled ? undefined : deps.processors.get(job.processor);
    if (processor === undefined && !cancelled && job.route.kind === 'inApp')
      throw new AppError('ConfigurationInvalid', `Job ${job.id} uses processor ${job.processor}, which this app does not have`);
    const summary: JsonObject | null = processor === undefined ? null : await processor.finalize(this.finalizeContext(job));
    const now = deps.clock.now();
    let completed: StoredJob;
    try {
      completed = await deps.jobs.update(
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
      if (err instanceof LostRace) return (await deps.jobs.read(job.id)) ?? claimed;
      throw err;
    }
    // The place among TALLYHO_JOBS_MAX_OPEN goes back now, before the delivery and the event: a job
    // waiting on those (a streams or Service Bus outage) holds no caller's place.
    await deps.slots.release(job.id);
    this.recordCompleted(completed.job, now);
    return deps.outputs.finish(completed);
  }

  private finalizeContext(job: JobRecord): FinalizeContext {
    const { results, files } = this.deps;
    return {
      jobId: job.id,
      round: job.round,
      async *outputs() {
        for await (const result of results.all(job.id, 'succeeded')) {
          if (result.output !== undefined) yield { id: result.id, output: result.output };
        }
      },
      writeFile: (name, contentType, body) => files.writeFile(job.id, name, contentType, body),
    };
  }

  private recordCompleted(job: JobRecord, now: number): void {
    const state = job.phase === 'cancelled' ? 'cancelled' : job.phase === 'completed' ? 'completed' : 'completedWithFailures';
    this.deps.instruments.metrics.completed.add(1, { 'tallyho.job.processor': job.processor, 'tallyho.job.state': state });
    this.deps.logger.log('info', 'jobs.completed', {
      job: job.id,
      round: job.round,
      state: job.phase,
      succeeded: job.succeeded,
      failed: job.failed,
      durationMs: now - job.acceptedAt,
    });
  }
}
