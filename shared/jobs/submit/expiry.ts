/**
 * Idle jobs expire (the reconciler's rule, ./reconcile.ts): a job no worker has served for its
 * processor's idle limit — `idleLimitSeconds` of a declared processor, else
 * TALLYHO_JOBS_IDLE_LIMIT_SECONDS — ends its unfinished items `failed` with code `expired`, finishes
 * (`completedWithFailures`) and so gives back its place among TALLYHO_JOBS_MAX_OPEN. Without it, jobs
 * of a processor nobody works would hold their owner's places, and the deployment's, for good.
 *
 * "Served" is read from durable state only, so every instance (and one that replaced a killed one)
 * judges alike: the job's last change (`updatedAt`: its submission, a new round, an enqueue), its
 * latest result (a worker's completion, a push's answer, an in-app item, a failure), and its lease
 * log (a worker extended or completed a lease: ../ledger/leaseLog.ts). A batch handed to a long poll
 * whose caller had gone is no service. Only an `enqueued` job that nobody is cancelling expires: an
 * enqueue in flight, a cancel and a finalization are the reconciler's other steps.
 *
 * A worker whose lease races the expiry loses it cleanly: results are insert-if-absent, so its
 * completion answers `alreadyFinal` for the expired items, and the job's remaining batches are
 * dropped when next received (../delivery/leaseGrant.ts: nothing of a finished job is leased).
 */
import type { Clock } from '../../clock';
import type { Logger } from '../../log';
import type { Completion } from '../ledger/completion';
import type { StoredJob } from '../ledger/jobRecord';
import type { LeaseLog } from '../ledger/leaseLog';
import type { ResultStore } from '../ledger/resultStore';
import type { DeclaredProcessor } from '../processors/processorDefinition';
import { closeOpenItems } from './closeItems';
import type { Enqueuer } from './enqueue';

export interface ExpiryDeps {
  readonly results: ResultStore;
  readonly leaseLog: Pick<LeaseLog, 'usedSince'>;
  readonly enqueuer: Pick<Enqueuer, 'readInput'>;
  readonly completion: Pick<Completion, 'completeIfDone'>;
  /** A declared processor's declaration (undefined for an in-app processor, or one no longer declared). */
  readonly declared: (name: string) => Promise<DeclaredProcessor | undefined>;
  /** TALLYHO_JOBS_IDLE_LIMIT_SECONDS: the limit of a processor that declares none. */
  readonly defaultIdleLimitSeconds: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

export class Expiry {
  constructor(private readonly deps: ExpiryDeps) {}

  /** The idle limit of a processor, in seconds. */
  async limitSeconds(processor: string): Promise<number> {
    const declared = await this.deps.declared(processor);
    return declared?.idleLimitSeconds ?? this.deps.defaultIdleLimitSeconds;
  }

  /** Expires the job if it has been idle past its limit; whether it did (the job is then finished). */
  async expireIfIdle(stored: StoredJob): Promise<boolean> {
    const { deps } = this;
    const { job } = stored;
    if (job.phase !== 'enqueued' || job.cancelledAt !== null) return false;
    const now = deps.clock.now();
    const limit = await this.limitSeconds(job.processor);
    const since = now - limit * 1000;
    // Cheapest first: the row already read, then one tally query, then at most one lease-log row.
    if (job.updatedAt > since) return false;
    const { lastAt } = await deps.results.progress(job.id);
    if (lastAt !== null && lastAt > since) return false;
    if (await deps.leaseLog.usedSince(job.id, since)) return false;
    const closed = await closeOpenItems(deps, job, {
      status: 'failed',
      code: 'expired',
      reason: `No worker served this job for ${limit} seconds (its processor's idle limit), so it expired`,
    });
    deps.logger.log('warn', 'jobs.expired', { job: job.id, processor: job.processor, idleLimitSeconds: limit, expiredItems: closed.open });
    const after = await deps.completion.completeIfDone(job.id);
    return after.job.phase !== 'enqueued';
  }
}
