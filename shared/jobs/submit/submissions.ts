/**
 * The requests that change a job: submit and run the failed items again (cancel: ./cancel.ts).
 *
 * Submitting: everything that can reject the request is checked before the first write
 * (./check.ts), so a 400 or 413 leaves no trace. Then, in this order: the `open` index entry, a place
 * among TALLYHO_JOBS_MAX_OPEN (a 429, with nothing left stored, when there is none), the input blob,
 * the job row (phase `enqueuing`, with the enqueue lease), the envelopes. With an Idempotency-Key the
 * job id is derived from the key: a resubmission reads the job, checks it carries the same items, and
 * finishes an enqueue that a crash interrupted, from the cursor on.
 *
 * Cancelling is ./cancel.ts.
 *
 * Retry-failed (`POST /api/jobs/{id}/retry-failed`): the round's item list is written first; then one
 * conditional write moves the job back to `enqueuing` (round + 1, `marked` false); the enqueuer
 * re-opens the failed rows (`retrying`, with a negative tally in the same transaction) and only then
 * sends the round's envelopes. Repeating the call while the round is being enqueued resumes it; once
 * the round runs it is a 409 until the job completes again.
 */
import type { Clock } from '../../clock';
import type { DurableClient } from '../../durable/client';
import { AppError } from '../../errors';
import type { Logger } from '../../log';
import { LostRace } from '../../retry';
import type { Signer } from '../../signing/signer';
import type { JobFiles } from '../envelopes/files';
import type { InputFile } from '../envelopes/input';
import type { Completion } from '../ledger/completion';
import type { JobRecord, StoredJob } from '../ledger/jobRecord';
import { enqueueLeaseMs, type JobRows } from '../ledger/jobRows';
import { hasPendingOutput, type Outputs } from '../ledger/outputs';
import type { ResultStore } from '../ledger/resultStore';
import type { JobInstruments } from '../metrics';
import type { JobSettings } from '../settings';
import { type CheckDeps, type Checked, checkSubmission, type SubmitRequest } from './check';
import type { Enqueuer } from './enqueue';
import { jobIdForKey, type KeySpace, newJobId } from './jobIds';

export type { SubmitRequest } from './check';

export interface SubmitResult {
  readonly job: JobRecord;
  /** True when an earlier submission with the same Idempotency-Key created the job. */
  readonly replayed: boolean;
}

export interface SubmitOptions {
  /** `app`: the key is one the app derived (a schedule's or gated run's), in a space no caller key reaches. */
  readonly keySpace?: KeySpace;
  /**
   * Who owns the job (a Caller id): its submitter, or the owner of the schedule or gated run that
   * submits it. A caller's Idempotency-Key names a job within its owner's keys only. The job takes a
   * place among TALLYHO_JOBS_MAX_OPEN within its owner's TALLYHO_JOBS_MAX_OPEN_PER_OWNER (a capped set
   * of fair shares, exact however many instances submit), given back when it finishes; app-made jobs
   * count for their maker's owner. Without an owner (the app's own jobs) it takes no place.
   */
  readonly owner?: string;
}

export class Submissions {
  constructor(private readonly deps: SubmissionsDeps) {}

  /** Throws the 400/413 that `submit` would answer for the request, and writes nothing. */
  async check(request: SubmitRequest): Promise<void> {
    await checkSubmission(this.deps, request);
  }

  async submit(request: SubmitRequest, key: string | undefined, options: SubmitOptions = {}): Promise<SubmitResult> {
    const checked = await checkSubmission(this.deps, request);
    return this.deps.instruments.spans.submit.run({ attributes: { 'tallyho.job.processor': request.processor } }, async (span) => {
      const result = await this.submitChecked(request, checked, key, options, span.traceparent());
      span.setAttributes({ 'tallyho.job.id': result.job.id });
      return result;
    });
  }

  /**
   * Runs a job's failed items again as a new round (see the top of this file); `durable`, the
   * request's Durable client, hands on the last completion's output first when that is still owed.
   */
  async retryFailed(jobId: string, durable?: DurableClient): Promise<JobRecord> {
    const { deps } = this;
    for (let attempt = 0; attempt < 3; attempt++) {
      const stored = await deps.rows.require(jobId);
      const { job } = stored;
      if (job.phase === 'enqueuing' && job.round > 0) {
        const claimed = await deps.rows.claimEnqueue(stored, deps.newLease());
        return claimed === undefined ? job : (await deps.enqueuer.run(claimed)).job;
      }
      if (hasPendingOutput(job)) {
        // The last completion's delivery and event go out first; the new round resets them.
        const after = await deps.outputs.finish(stored, durable);
        if (hasPendingOutput(after.job))
          throw new AppError('DependencyUnavailable', `Job ${jobId} is still handing on its last completion; try again`, {
            retryAfterSeconds: 5,
          });
        continue;
      }
      if (job.phase !== 'completedWithFailures') {
        throw new AppError(
          'Conflict',
          `Job ${jobId} is ${job.phase === 'completed' ? 'completed without failures' : 'still running'}; only a job that completed with failures can retry them`,
          { extra: { job: jobId } },
        );
      }
      try {
        return (await this.startRound(stored)).job;
      } catch (err) {
        // Another retry-failed (or the event bookkeeping) changed the job first: look again.
        if (!(err instanceof LostRace)) throw err;
      }
    }
    throw new AppError('ConcurrencyExhausted', `Job ${jobId} keeps changing; try again`, { retryAfterSeconds: 1 });
  }

  /** The submission after its checks; `trace` (this span's traceparent) goes with the job to its envelopes. */
  private async submitChecked(
    request: SubmitRequest,
    { input, route, batchSize }: Checked,
    key: string | undefined,
    options: SubmitOptions,
    trace: string | undefined,
  ): Promise<SubmitResult> {
    const { deps } = this;
    const now = deps.clock.now();
    const id = key === undefined ? newJobId(now) : jobIdForKey(key, await deps.signer(), options.keySpace, options.owner);
    if (key !== undefined) {
      const existing = await deps.rows.read(id);
      if (existing !== undefined) return this.resume(existing, request, input, options.owner);
    }
    const draft = {
      ...this.draft(id, request, input, route, batchSize, now, trace),
      ...(options.owner === undefined ? {} : { owner: options.owner }),
    };
    const job: JobRecord = { ...draft, envelopes: (await deps.enqueuer.roundEnvelopes(draft, input)).length };
    await deps.rows.open(id, now, options.owner);
    await deps.files.writeInput(job, input.text);
    const created = await this.createOpened(job, options.owner);
    if (created === undefined) {
      // The same key, submitted concurrently, created it first.
      const existing = await deps.rows.read(id);
      if (existing === undefined) throw new AppError('Conflict', 'The job is being created concurrently; retry');
      return this.resume(existing, request, input, options.owner);
    }
    deps.logger.log('info', 'jobs.accepted', { job: id, processor: job.processor, items: job.items, envelopes: job.envelopes });
    const enqueued = (await deps.enqueuer.run(created, input)).job;
    if (route.kind === 'declared') deps.wake(route.queue);
    return { job: enqueued, replayed: false };
  }

  /**
   * Creates the opened job. Where a submission took longer than TALLYHO_JOBS_STALE_SECONDS between
   * its place and its row, the reconciler may have given the place back and left a tombstone
   * (ledger/jobRows.ts `dropDebris`): the job is opened again — a new place, or the 429 of a full
   * cap — and created then. Undefined when a job with this id exists (the same key, concurrently).
   */
  private async createOpened(job: JobRecord, owner: string | undefined): Promise<StoredJob | undefined> {
    const { rows, clock } = this.deps;
    for (let attempt = 0; attempt < 3; attempt++) {
      const created = await rows.create(job);
      if (created !== undefined) return created;
      const found = await rows.clearTombstone(job.id);
      if (found === 'job') return undefined;
      if (found === 'burying') {
        throw new AppError('DependencyUnavailable', `Job ${job.id} took too long to create and is being given up; submit it again`, {
          retryAfterSeconds: 5,
        });
      }
      await rows.open(job.id, clock.now(), owner);
    }
    throw new AppError('ConcurrencyExhausted', `Job ${job.id} keeps changing; try again`, { retryAfterSeconds: 1 });
  }

  private draft(
    id: string,
    request: SubmitRequest,
    input: InputFile,
    route: Checked['route'],
    batchSize: number,
    now: number,
    trace: string | undefined,
  ): JobRecord {
    const { settings } = this.deps;
    return {
      id,
      processor: request.processor,
      route,
      items: input.items.length,
      inputSha256: input.sha256,
      inputBytes: input.bytes,
      pack: { maxItems: batchSize, maxBytes: settings.envelopeMaxBytes, claimCheckBytes: settings.claimCheckBytes },
      phase: 'enqueuing',
      round: 0,
      envelopes: 0,
      cursor: 0,
      roundItems: input.items.length,
      marked: true,
      lease: this.deps.newLease(),
      leaseUntil: now + enqueueLeaseMs,
      acceptedAt: now,
      enqueuedAt: null,
      startedAt: null,
      lastResultAt: null,
      completedAt: null,
      updatedAt: now,
      succeeded: null,
      failed: null,
      cancelled: null,
      cancelledAt: null,
      summary: null,
      delivery: 'none',
      event: 'none',
      ...(trace === undefined ? {} : { trace }),
    };
  }

  /** A resubmission with the same key: same items, or 409; then finish the enqueue if it was interrupted. */
  private async resume(existing: StoredJob, request: SubmitRequest, input: InputFile, owner: string | undefined): Promise<SubmitResult> {
    const { deps } = this;
    const { job } = existing;
    // Ids are per owner (jobIdForKey), so only a row from before owners were recorded can differ here.
    if (job.inputSha256 !== input.sha256 || job.processor !== request.processor || job.owner !== owner) {
      // The job is not named: a caller who guessed someone else's key learns nothing of their job.
      throw new AppError('Conflict', 'The Idempotency-Key was first used for a different job submission');
    }
    if (job.phase !== 'enqueuing' || job.round !== 0) return { job, replayed: true };
    const claimed = await deps.rows.claimEnqueue(existing, deps.newLease());
    if (claimed === undefined) return { job, replayed: true };
    deps.logger.log('warn', 'jobs.enqueue_resumed', { job: job.id, by: 'resubmission', cursor: job.cursor, envelopes: job.envelopes });
    return { job: (await deps.enqueuer.run(claimed, input)).job, replayed: true };
  }

  private async startRound(stored: StoredJob): Promise<StoredJob> {
    const { deps } = this;
    const { job } = stored;
    const ids: string[] = [];
    for await (const result of deps.results.all(job.id, 'failed')) ids.push(result.id);
    const round = job.round + 1;
    await deps.files.writeRoundItems(job.id, round, ids);
    const input = await deps.enqueuer.readInput(job);
    const now = deps.clock.now();
    const draft: JobRecord = {
      ...job,
      phase: 'enqueuing',
      round,
      cursor: 0,
      roundItems: ids.length,
      marked: false,
      lease: deps.newLease(),
      leaseUntil: now + enqueueLeaseMs,
      completedAt: null,
      succeeded: null,
      failed: null,
      summary: null,
      delivery: 'none',
      event: 'none',
      updatedAt: now,
    };
    const next = { ...draft, envelopes: (await deps.enqueuer.roundEnvelopes(draft, input)).length };
    const started = await deps.rows.startRound(stored, next);
    deps.logger.log('info', 'jobs.retry_failed', { job: job.id, round, items: ids.length, envelopes: next.envelopes });
    return deps.enqueuer.run(started, input);
  }
}

export interface SubmissionsDeps extends CheckDeps {
  readonly settings: CheckDeps['settings'] & Pick<JobSettings, 'envelopeMaxBytes' | 'claimCheckBytes'>;
  readonly rows: JobRows;
  readonly results: ResultStore;
  readonly files: JobFiles;
  readonly enqueuer: Enqueuer;
  readonly completion: Completion;
  readonly outputs: Outputs;
  /** Tells this instance's waiting lease requests that a declared processor's queue has new envelopes. */
  readonly wake: (queue: string) => void;
  /** Lease tokens (who is enqueuing a job). */
  readonly newLease: () => string;
  readonly signer: () => Promise<Signer>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The capability's metrics and spans. */
  readonly instruments: JobInstruments;
}
