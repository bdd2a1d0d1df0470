/**
 * The retention purge (run with the reconciler): jobs that finished more than
 * TALLYHO_JOBS_RETENTION_DAYS ago are deleted — their files and input, their results, their row —
 * oldest first, a bounded number per run. A job that was run again since (retry-failed) is left
 * alone; its index entry goes, and it gets a new one when it finishes again.
 */
import type { Clock } from '../../clock';
import type { Logger } from '../../log';
import type { JobFiles } from '../envelopes/files';
import { isFinished } from './jobRecord';
import type { JobStore } from './jobStore';
import type { ResultStore } from './resultStore';

export interface PurgeReport {
  readonly purged: number;
  readonly skipped: number;
}

const perRun = 50;

export interface PurgeDeps {
  readonly jobs: JobStore;
  readonly results: ResultStore;
  readonly files: JobFiles;
  /** TALLYHO_JOBS_RETENTION_DAYS (0: kept forever). */
  readonly retentionDays: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

export async function purgeFinished(deps: PurgeDeps): Promise<PurgeReport> {
  const days = deps.retentionDays;
  if (days === 0) return { purged: 0, skipped: 0 };
  const cutoff = deps.clock.now() - days * 86_400_000;
  let purged = 0;
  let skipped = 0;
  for (const entry of await deps.jobs.finishedBefore(cutoff, perRun)) {
    const stored = await deps.jobs.read(entry.id);
    if (stored !== undefined && (!isFinished(stored.job.phase) || (stored.job.completedAt ?? 0) >= cutoff)) {
      skipped++;
    } else {
      await deps.files.removeJob(entry.id);
      await deps.results.removeJob(entry.id);
      await deps.jobs.remove(entry.id);
      purged++;
      deps.logger.log('info', 'jobs.purged', { job: entry.id });
    }
    await deps.jobs.unmarkFinished(entry.rowKey);
  }
  return { purged, skipped };
}
