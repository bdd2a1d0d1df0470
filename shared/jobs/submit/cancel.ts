/**
 * Cancelling a job (`DELETE /api/jobs/{id}`), in two steps so the answer does not wait on the items:
 *
 * 1. The request: one conditional write marks the job (`cancelledAt`: its state reads `cancelling`).
 *    From that write on, every instance refuses the job's leases and drops its batches when they
 *    are received, because each of those reads the job row (durable state, nothing an instance keeps).
 *    Then a cancel request naming only the job goes to the `<prefix>-c` queue, and the call answers.
 * 2. The background step (the `jobsCancelItems` queue trigger): every item without a final result is
 *    recorded `cancelled` — insert-if-absent like any result, so an item a worker finished first
 *    keeps its result and the tallies stay exact — and the job completes as `cancelled` (without the
 *    processor's reduce). It is idempotent: a request delivered twice, or a step killed halfway and
 *    delivered again, writes only what is missing. A request that was never sent (the queue failed)
 *    or that ran out of deliveries is the reconciler's: it finishes a cancel idle for
 *    TALLYHO_JOBS_STALE_SECONDS. Repeating the DELETE sends the request again.
 *
 * A message on the queue names a job and nothing else: it can only finish a cancel the job row
 * already records, so a forged one changes nothing.
 */
import type { QueueClient } from '@azure/storage-queue';

import type { Logger } from '../../log';
import type { Completion } from '../ledger/completion';
import { isFinished, type JobRecord } from '../ledger/jobRecord';
import type { JobRows } from '../ledger/jobRows';
import { requestedJob } from '../ledger/outputs';
import type { ResultStore } from '../ledger/resultStore';
import { closeOpenItems } from './closeItems';
import type { Enqueuer } from './enqueue';

export interface CancelsDeps {
  readonly rows: JobRows;
  readonly results: ResultStore;
  readonly enqueuer: Pick<Enqueuer, 'readInput'>;
  readonly completion: Pick<Completion, 'completeIfDone'>;
  /** The cancel request queue (`cancelQueueName`). */
  readonly cancelQueue: () => Promise<QueueClient>;
  readonly logger: Logger;
}

export class Cancels {
  constructor(private readonly deps: CancelsDeps) {}

  /** Step 1: the job marked `cancelling` and its background step requested; the job as it now is. */
  async request(id: string): Promise<JobRecord> {
    const job = await this.deps.rows.markCancelled(id);
    if (!isFinished(job.phase)) await this.send(id);
    return job;
  }

  /** The `jobsCancelItems` trigger's message: finishes the cancel it names (nothing, for a job not being cancelled). */
  async onRequest(text: string): Promise<{ job: string | undefined; cancelled: number }> {
    const job = requestedJob(text);
    if (job === undefined) {
      this.deps.logger.log('error', 'jobs.cancel_request_unreadable', { preview: text.slice(0, 200) });
      return { job, cancelled: 0 };
    }
    return { job, cancelled: await this.finish(job) };
  }

  /**
   * Step 2: records every item of a job being cancelled that has no final result as `cancelled` and
   * completes the job; the items it recorded (0 when the job is not being cancelled or is done).
   */
  async finish(id: string): Promise<number> {
    const { deps } = this;
    const stored = await deps.rows.read(id);
    if (stored === undefined || stored.job.cancelledAt === null) return 0;
    const { job } = stored;
    let recorded = 0;
    if (!isFinished(job.phase)) {
      const closed = await closeOpenItems(deps, job, {
        status: 'cancelled',
        code: 'cancelled',
        reason: 'The job was cancelled before this item had a result',
      });
      recorded = closed.recorded;
      deps.logger.log('info', 'jobs.cancelled', { job: id, cancelledItems: closed.open });
    }
    await deps.completion.completeIfDone(id);
    return recorded;
  }

  private async send(id: string): Promise<void> {
    try {
      const queue = await this.deps.cancelQueue();
      await queue.sendMessage(Buffer.from(JSON.stringify({ job: id }), 'utf8').toString('base64'), { messageTimeToLive: -1 });
    } catch (err) {
      // The job is marked; the reconciler finishes the cancel once it has been idle TALLYHO_JOBS_STALE_SECONDS.
      this.deps.logger.log('error', 'jobs.cancel_request_failed', { job: id, error: err });
    }
  }
}
