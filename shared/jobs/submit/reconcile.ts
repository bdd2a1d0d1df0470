/**
 * The reconciler (a timer): visits the jobs in the `open` index and finishes whatever a crash left
 * half done — an enqueue whose lease ran out (resumed from its cursor), a finalization whose
 * finalizer vanished, a completion event that was not published — and drops jobs that are done
 * from the index. Each step is the same conditional, idempotent one the normal path uses, so the
 * reconciler racing a live worker costs a lost race, never a duplicate.
 */
import { closeJob, completeIfDone, finishOutputs, hasPendingOutput } from '../ledger/complete';
import type { JobsContext } from '../context';
import { claimEnqueue, runEnqueue } from './enqueue';
import { isFinished } from '../ledger/jobRecord';

type ReconcileAction = 'none' | 'enqueueResumed' | 'completed' | 'published' | 'closed';

export interface ReconcileReport {
  readonly visited: number;
  readonly actions: Partial<Record<ReconcileAction, number>>;
  readonly errors: number;
}

async function reconcileJob(ctx: JobsContext, id: string, since: number): Promise<ReconcileAction> {
  const now = ctx.clock.now();
  const staleMs = ctx.settings.staleSeconds * 1000;
  const stored = await ctx.jobs.read(id);
  if (stored === undefined) {
    // The index entry is written before the job row; only an old entry without a row is debris,
    // and the place among TALLYHO_JOBS_MAX_OPEN a submitter that died took for it goes back.
    if (now - since <= staleMs) return 'none';
    await ctx.slots.release(id);
    await ctx.jobs.clearOpen(id);
    return 'closed';
  }
  const { job } = stored;
  if (job.phase === 'enqueuing') {
    const claimed = await claimEnqueue(ctx, stored, ctx.newLease());
    if (claimed === undefined) return 'none';
    ctx.logger.log('warn', 'jobs.enqueue_resumed', { job: id, by: 'reconciler', cursor: job.cursor, envelopes: job.envelopes });
    await runEnqueue(ctx, claimed);
    return 'enqueueResumed';
  }
  if (!isFinished(job.phase)) {
    return isFinished((await completeIfDone(ctx, id)).job.phase) ? 'completed' : 'none';
  }
  if (hasPendingOutput(job)) {
    await ctx.slots.release(id);
    if (now - job.updatedAt < staleMs) return 'none';
    return hasPendingOutput((await finishOutputs(ctx, stored)).job) ? 'none' : 'published';
  }
  // A finalizer that died between completing and giving back its place.
  await ctx.slots.release(id);
  await closeJob(ctx, job);
  return 'closed';
}

export async function reconcile(ctx: JobsContext, limit = 1000): Promise<ReconcileReport> {
  const open = await ctx.jobs.listOpen(limit);
  const actions: Partial<Record<ReconcileAction, number>> = {};
  let errors = 0;
  for (const { id, since } of open) {
    try {
      const action = await reconcileJob(ctx, id, since);
      actions[action] = (actions[action] ?? 0) + 1;
    } catch (err) {
      errors++;
      ctx.logger.log('error', 'jobs.reconcile_failed', { job: id, error: err });
    }
  }
  return { visited: open.length, actions, errors };
}
