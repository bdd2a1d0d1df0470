/**
 * The reconciler (a timer): visits the jobs in the `open` index and finishes whatever a crash left
 * half done — an enqueue whose lease ran out (resumed from its cursor), a cancel whose background
 * step never ran or stopped (./cancel.ts), a finalization whose finalizer vanished, a completion's
 * hand-on or event still owed — expires a job no worker served within its processor's idle limit
 * (./expiry.ts), and drops jobs that are done from the index. Each step is the same conditional,
 * idempotent one the normal path uses, so the reconciler racing a live worker costs a lost race,
 * never a duplicate.
 *
 * A pass visits one page of the index (TALLYHO_JOBS_RECONCILE_PAGE jobs, in id order) after the last
 * one the previous pass visited, kept in the jobs table (`reconcile`/`cursor`); a short page is the
 * end, and the next pass starts again from the first. So every open job is visited once every
 * ceil(open / page) passes however many there are, from whichever instance the timer runs on.
 */
import type { Clock } from '../../clock';
import type { Logger } from '../../log';
import type { Completion } from '../ledger/completion';
import { isFinished } from '../ledger/jobRecord';
import type { JobRows } from '../ledger/jobRows';
import { hasPendingOutput, type Outputs } from '../ledger/outputs';
import type { Cancels } from './cancel';
import type { Enqueuer } from './enqueue';
import type { Expiry } from './expiry';

type ReconcileAction = 'none' | 'enqueueResumed' | 'cancelFinished' | 'expired' | 'completed' | 'published' | 'closed';

export interface ReconcileReport {
  readonly visited: number;
  readonly actions: Partial<Record<ReconcileAction, number>>;
  readonly errors: number;
}

export interface ReconcileDeps {
  readonly rows: JobRows;
  readonly enqueuer: Enqueuer;
  readonly completion: Completion;
  readonly outputs: Outputs;
  readonly cancels: Pick<Cancels, 'finish'>;
  /** The idle-job rule (./expiry.ts). */
  readonly expiry: Pick<Expiry, 'expireIfIdle'>;
  /** TALLYHO_JOBS_STALE_SECONDS: work idle this long is taken over. */
  readonly staleSeconds: number;
  /** TALLYHO_JOBS_RECONCILE_PAGE: open jobs one pass visits. */
  readonly pageSize: number;
  readonly newLease: () => string;
  readonly clock: Clock;
  readonly logger: Logger;
}

export class Reconciler {
  constructor(private readonly deps: ReconcileDeps) {}

  async run(): Promise<ReconcileReport> {
    const { rows, pageSize } = this.deps;
    const open = await rows.listOpen(pageSize, await rows.reconcileCursor());
    const actions: Partial<Record<ReconcileAction, number>> = {};
    let errors = 0;
    for (const { id, since, etag } of open) {
      try {
        const action = await this.reconcileJob(id, since, etag);
        actions[action] = (actions[action] ?? 0) + 1;
      } catch (err) {
        errors++;
        this.deps.logger.log('error', 'jobs.reconcile_failed', { job: id, error: err });
      }
    }
    // Written after the page: a pass that dies before it visits the same page again, never skips one.
    await rows.setReconcileCursor(open.length < pageSize ? '' : (open.at(-1)?.id ?? ''));
    return { visited: open.length, actions, errors };
  }

  private async reconcileJob(id: string, since: number, openEtag: string): Promise<ReconcileAction> {
    const { deps } = this;
    const now = deps.clock.now();
    const staleMs = deps.staleSeconds * 1000;
    const stored = await deps.rows.read(id);
    if (stored === undefined) {
      // The index entry is written before the job row; only an old entry without a row is debris,
      // and the place among TALLYHO_JOBS_MAX_OPEN a submitter that died took for it goes back.
      if (now - since <= staleMs) return 'none';
      return (await deps.rows.dropDebris(id, openEtag)) ? 'closed' : 'none';
    }
    const { job } = stored;
    if (job.phase === 'enqueuing') {
      const claimed = await deps.rows.claimEnqueue(stored, deps.newLease());
      if (claimed === undefined) return 'none';
      deps.logger.log('warn', 'jobs.enqueue_resumed', { job: id, by: 'reconciler', cursor: job.cursor, envelopes: job.envelopes });
      await deps.enqueuer.run(claimed);
      return 'enqueueResumed';
    }
    if (!isFinished(job.phase) && job.cancelledAt !== null && now - job.updatedAt >= staleMs) {
      // Marked cancelled, and its background step has not finished it since: it never ran, or died.
      await deps.cancels.finish(id);
      return isFinished((await deps.rows.require(id)).job.phase) ? 'cancelFinished' : 'none';
    }
    if (await deps.expiry.expireIfIdle(stored)) return 'expired';
    if (!isFinished(job.phase)) {
      return isFinished((await deps.completion.completeIfDone(id)).job.phase) ? 'completed' : 'none';
    }
    if (hasPendingOutput(job)) {
      await deps.rows.releasePlace(id);
      if (now - job.updatedAt < staleMs) return 'none';
      return hasPendingOutput((await deps.outputs.finish(stored)).job) ? 'none' : 'published';
    }
    // A finalizer that died between completing and giving back its place.
    await deps.rows.releasePlace(id);
    await deps.outputs.close(job);
    return 'closed';
  }
}
