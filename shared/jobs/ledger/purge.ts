/**
 * The retention purge (run with the reconciler): jobs that finished more than
 * TALLYHO_JOBS_RETENTION_DAYS ago are deleted — their files and input, their results, their row —
 * oldest first, a bounded number per run. A job that was run again since (retry-failed) is left
 * alone; its index entry goes, and it gets a new one when it finishes again.
 */
import type { JobsContext } from '../context';
import { isFinished } from './jobRecord';

export interface PurgeReport {
  readonly purged: number;
  readonly skipped: number;
}

const perRun = 50;

export async function purgeFinished(ctx: JobsContext): Promise<PurgeReport> {
  const days = ctx.settings.retentionDays;
  if (days === 0) return { purged: 0, skipped: 0 };
  const cutoff = ctx.clock.now() - days * 86_400_000;
  let purged = 0;
  let skipped = 0;
  for (const entry of await ctx.jobs.finishedBefore(cutoff, perRun)) {
    const stored = await ctx.jobs.read(entry.id);
    if (stored !== undefined && (!isFinished(stored.job.phase) || (stored.job.completedAt ?? 0) >= cutoff)) {
      skipped++;
    } else {
      await ctx.files.removeJob(entry.id);
      await ctx.results.removeJob(entry.id);
      await ctx.jobs.remove(entry.id);
      purged++;
      ctx.logger.log('info', 'jobs.purged', { job: entry.id });
    }
    await ctx.jobs.unmarkFinished(entry.rowKey);
  }
  return { purged, skipped };
}
