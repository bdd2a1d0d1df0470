/**
 * `POST /api/jobs/{id}/retry-failed`: runs the failed items of a job that completed with failures
 * again, as a new round. The round's item list is written first; then one conditional write moves
 * the job back to `enqueuing` (round + 1, `marked` false); the enqueuer re-opens the failed rows
 * (`retrying`, with a negative tally in the same transaction) and only then sends the round's
 * envelopes. Repeating the call while the round is being enqueued resumes it; once the round runs
 * it is a 409 until the job completes again.
 */
import { AppError } from '../../errors';
import { LostRace } from '../../retry';
import { finishOutputs, hasPendingOutput } from '../ledger/complete';
import { enqueueLeaseMs, type JobsContext } from '../context';
import { claimEnqueue, readInputFile, roundEnvelopes, runEnqueue } from './enqueue';
import type { JobRecord, StoredJob } from '../ledger/jobRecord';

async function failedIds(ctx: JobsContext, jobId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const result of ctx.results.all(jobId, 'failed')) ids.push(result.id);
  return ids;
}

async function startRound(ctx: JobsContext, stored: StoredJob): Promise<StoredJob> {
  const { job } = stored;
  const ids = await failedIds(ctx, job.id);
  const round = job.round + 1;
  await ctx.files.writeRoundItems(job.id, round, ids);
  const input = await readInputFile(ctx, job);
  const now = ctx.clock.now();
  const draft: JobRecord = {
    ...job,
    phase: 'enqueuing',
    round,
    cursor: 0,
    roundItems: ids.length,
    marked: false,
    lease: ctx.newLease(),
    leaseUntil: now + enqueueLeaseMs,
    completedAt: null,
    succeeded: null,
    failed: null,
    summary: null,
    delivery: 'none',
    event: 'none',
    updatedAt: now,
  };
  const next = { ...draft, envelopes: (await roundEnvelopes(ctx, draft, input)).length };
  await ctx.jobs.markOpen(job.id, now);
  const started = await ctx.jobs.update(next, stored.etag);
  ctx.logger.log('info', 'jobs.retry_failed', { job: job.id, round, items: ids.length, envelopes: next.envelopes });
  return runEnqueue(ctx, started, input);
}

export async function retryFailed(ctx: JobsContext, jobId: string): Promise<JobRecord> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const stored = await ctx.jobs.read(jobId);
    if (stored === undefined) throw new AppError('NotFound', `Job ${jobId} does not exist`);
    const { job } = stored;
    if (job.phase === 'enqueuing' && job.round > 0) {
      const claimed = await claimEnqueue(ctx, stored, ctx.newLease());
      return claimed === undefined ? job : (await runEnqueue(ctx, claimed)).job;
    }
    if (hasPendingOutput(job)) {
      // The last completion's delivery and event go out first; the new round resets them.
      const after = await finishOutputs(ctx, stored);
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
        {
          extra: { job: jobId },
        },
      );
    }
    try {
      return (await startRound(ctx, stored)).job;
    } catch (err) {
      // Another retry-failed (or the event bookkeeping) changed the job first: look again.
      if (!(err instanceof LostRace)) throw err;
    }
  }
  throw new AppError('ConcurrencyExhausted', `Job ${jobId} keeps changing; try again`, { retryAfterSeconds: 1 });
}
