/**
 * Enqueuing a round's envelopes. The envelopes are a pure function of the input file, the round's
 * item list and the packing limits stored with the job, so whoever resumes an interrupted enqueue
 * (a resubmission with the same Idempotency-Key, or the reconciler) cuts exactly the same ones.
 * The job's cursor counts the envelopes sent; it advances after each batch of
 * TALLYHO_JOBS_ENQUEUE_PARALLELISM sends. A resume starts at the cursor, so only the batch in
 * flight at a crash can be sent twice, and a duplicate envelope changes nothing: its results are
 * already recorded (insert-if-absent) and progress is counted from the results, not from messages.
 */
import { AppError } from '../../errors';
import type { Logger } from '../../log';
import type { Envelope } from '../envelopes/envelope';
import type { JobFiles } from '../envelopes/files';
import { envelopeId } from '../envelopes/ids';
import { entryFor, type InputFile, parseInput } from '../envelopes/input';
import { pack, queueIndexFor } from '../envelopes/packing';
import { type EnvelopeQueues, sendAll } from '../envelopes/queues';
import type { JobRecord, StoredJob } from '../ledger/jobRecord';
import type { JobRows } from '../ledger/jobRows';
import type { ResultStore } from '../ledger/resultStore';

export class Enqueuer {
  constructor(private readonly deps: EnqueueDeps) {}

  async readInput(job: JobRecord): Promise<InputFile> {
    const text = await this.deps.files.readInput(job);
    if (text === undefined) throw new AppError('CorruptState', `The input of job ${job.id} is missing`);
    return parseInput(text);
  }

  /** The envelopes of the job's current round, cut exactly as when the round started. */
  async roundEnvelopes(job: JobRecord, known?: InputFile): Promise<Envelope[]> {
    const { files } = this.deps;
    const input = known ?? (await this.readInput(job));
    let items = input.items;
    if (job.round > 0) {
      const ids = await files.readRoundItems(job.id, job.round);
      if (ids === undefined) throw new AppError('CorruptState', `The item list of round ${job.round} of job ${job.id} is missing`);
      const wanted = new Set(ids);
      items = items.filter((item) => wanted.has(item.id));
    }
    const ref = files.inputRef(job);
    const entries = items.map((item) => entryFor(item, 1, job.pack.claimCheckBytes, ref));
    const header = { jobId: job.id, processor: job.processor, round: job.round, jobItems: job.items, trace: job.trace };
    return pack(header, entries, job.pack, (k) => envelopeId(job.round, k));
  }

  /**
   * Sends what the cursor has not passed, then marks the job `enqueued`. Stops (returning the job as
   * it now is) when the job changed under it: another enqueuer took over, or the job completed.
   */
  async run(claimed: StoredJob, input?: InputFile): Promise<StoredJob> {
    const { rows } = this.deps;
    let stored = claimed;
    const { job } = stored;
    if (job.round > 0 && !job.marked) {
      // Re-open the failed rows before anything is sent: once an envelope runs, its items must find them open.
      const ids = (await this.deps.files.readRoundItems(job.id, job.round)) ?? [];
      await this.deps.results.reopen(job.id, job.round, ids);
      const marked = await rows.advanceEnqueue(stored, { marked: true });
      if (!marked.kept) return marked.stored;
      stored = marked.stored;
    }
    const envelopes = await this.roundEnvelopes(stored.job, input);
    if (envelopes.length !== stored.job.envelopes) {
      throw new AppError(
        'CorruptState',
        `Job ${job.id} round ${job.round} packs into ${envelopes.length} envelopes, not the ${stored.job.envelopes} recorded`,
      );
    }
    while (stored.job.cursor < envelopes.length) {
      const from = stored.job.cursor;
      const batch = envelopes.slice(from, from + this.deps.parallelism);
      await sendAll(batch.map((envelope, i) => this.deps.queues.send(this.queueOf(job, from + i), envelope, 0)));
      const moved = await rows.advanceEnqueue(stored, { cursor: from + batch.length });
      if (!moved.kept) return moved.stored;
      stored = moved.stored;
    }
    stored = await rows.markEnqueued(stored);
    this.deps.logger.log('info', 'jobs.enqueued', { job: job.id, round: job.round, envelopes: envelopes.length });
    return stored;
  }

  /** Where a job's k-th envelope goes: its declared processor's own queue, or a work queue (round-robin). */
  private queueOf(job: JobRecord, k: number): string {
    const { queues } = this.deps;
    return job.route.kind === 'declared' ? job.route.queue : queues.workQueue(queueIndexFor(job.id, k, queues.count));
  }
}

export interface EnqueueDeps {
  readonly rows: JobRows;
  readonly results: ResultStore;
  readonly files: JobFiles;
  readonly queues: EnvelopeQueues;
  /** TALLYHO_JOBS_ENQUEUE_PARALLELISM: envelopes sent at once (the most a resumed enqueue can send twice). */
  readonly parallelism: number;
  readonly logger: Logger;
}
