/**
 * `DELETE /api/jobs/{id}`: cancels a job. One conditional write marks it (`cancelledAt`); from then
 * on its leases are refused and its messages are dropped when received. Every item without a final
 * result is then recorded `cancelled` — insert-if-absent like any result, so an item a worker
 * finished first keeps its result, and the tallies stay exact — and the job completes as
 * `cancelled` (without the processor's reduce). Repeating the call finishes a cancel a crash cut short.
 */
import { AppError } from '../../errors';
import { LostRace } from '../../retry';
import { completeIfDone } from '../ledger/complete';
import type { JobsContext } from '../context';
import { readInputFile } from './enqueue';
import { isFinished, type JobRecord } from '../ledger/jobRecord';
import type { ItemResult } from '../ledger/resultStore';

async function mark(ctx: JobsContext, id: string): Promise<JobRecord> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const stored = await ctx.jobs.read(id);
    if (stored === undefined) throw new AppError('NotFound', `Job ${id} does not exist`);
    const { job } = stored;
    if (job.cancelledAt !== null || job.phase === 'cancelled') return job;
    if (isFinished(job.phase) || job.phase === 'finalizing') {
      throw new AppError('Conflict', `Job ${id} has finished (${job.phase}); only an unfinished job can be cancelled`, {
        extra: { state: job.phase },
      });
    }
    const now = ctx.clock.now();
    try {
      return (await ctx.jobs.update({ ...job, cancelledAt: now, updatedAt: now }, stored.etag)).job;
    } catch (err) {
      if (!(err instanceof LostRace)) throw err;
    }
  }
  throw new AppError('ConcurrencyExhausted', `Job ${id} keeps changing; try again`, { retryAfterSeconds: 1 });
}

export async function cancelJob(ctx: JobsContext, id: string): Promise<JobRecord> {
  const job = await mark(ctx, id);
  if (job.phase !== 'cancelled') {
    const rows = await ctx.results.allRows(id);
    const input = await readInputFile(ctx, job);
    const open: ItemResult[] = input.items
      .filter((item) => {
        const row = rows.get(item.id);
        return row === undefined || row.status === 'retrying';
      })
      .map((item) => ({
        id: item.id,
        status: 'cancelled',
        code: 'cancelled',
        reason: 'The job was cancelled before this item had a result',
        attempts: 0,
        envelope: '',
        claimCheck: false,
      }));
    await ctx.results.record(id, job.round, open, false, rows);
    ctx.logger.log('info', 'jobs.cancelled', { job: id, cancelledItems: open.length });
  }
  return (await completeIfDone(ctx, id)).job;
}
