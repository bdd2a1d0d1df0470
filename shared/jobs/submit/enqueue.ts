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
import { LostRace } from '../../retry';
import { enqueueLeaseMs, type JobsContext } from '../context';
import type { Envelope } from '../envelopes/envelope';
import { envelopeId } from '../envelopes/ids';
import { entryFor, type InputFile, parseInput } from '../envelopes/input';
import type { JobRecord, StoredJob } from '../ledger/jobRecord';
import { pack, queueIndexFor } from '../envelopes/packing';
import { sendAll } from '../envelopes/queues';

export async function readInputFile(ctx: JobsContext, job: JobRecord): Promise<InputFile> {
  const text = await ctx.files.readInput(job);
  if (text === undefined) throw new AppError('CorruptState', `The input of job ${job.id} is missing`);
  return parseInput(text);
}

/** The envelopes of the job's current round, cut exactly as when the round started. */
export async function roundEnvelopes(ctx: JobsContext, job: JobRecord, known?: InputFile): Promise<Envelope[]> {
  const input = known ?? (await readInputFile(ctx, job));
  let items = input.items;
  if (job.round > 0) {
    const ids = await ctx.files.readRoundItems(job.id, job.round);
    if (ids === undefined) throw new AppError('CorruptState', `The item list of round ${job.round} of job ${job.id} is missing`);
    const wanted = new Set(ids);
    items = items.filter((item) => wanted.has(item.id));
  }
  const ref = ctx.files.inputRef(job);
  const entries = items.map((item) => entryFor(item, 1, job.pack.claimCheckBytes, ref));
  const header = { jobId: job.id, processor: job.processor, round: job.round, jobItems: job.items, trace: job.trace };
  return pack(header, entries, job.pack, (k) => envelopeId(job.round, k));
}

/** Where a job's k-th envelope goes: its declared processor's own queue, or a work queue (round-robin). */
function envelopeQueue(ctx: JobsContext, job: JobRecord, k: number): string {
  return job.queue !== '' ? job.queue : ctx.queues.workQueue(queueIndexFor(job.id, k, ctx.queues.count));
}

/** Takes the enqueue lease (ours, or one that ran out); undefined when someone else is enqueuing. */
export async function claimEnqueue(ctx: JobsContext, stored: StoredJob, lease: string): Promise<StoredJob | undefined> {
  const { job } = stored;
  const now = ctx.clock.now();
  if (job.phase !== 'enqueuing') return undefined;
  if (job.lease === lease) return stored;
  if (job.leaseUntil > now) return undefined;
  try {
    return await ctx.jobs.update({ ...job, lease, leaseUntil: now + enqueueLeaseMs, updatedAt: now }, stored.etag);
  } catch (err) {
    if (err instanceof LostRace) return undefined;
    throw err;
  }
}

/**
 * Sends what the cursor has not passed, then marks the job `enqueued`. Stops (returning the job as
 * it now is) when the job changed under it: another enqueuer took over, or the job completed.
 */
export async function runEnqueue(ctx: JobsContext, claimed: StoredJob, input?: InputFile): Promise<StoredJob> {
  let stored = claimed;
  const advance = async (change: Partial<JobRecord>): Promise<boolean> => {
    const now = ctx.clock.now();
    try {
      stored = await ctx.jobs.update({ ...stored.job, ...change, leaseUntil: now + enqueueLeaseMs, updatedAt: now }, stored.etag);
      return true;
    } catch (err) {
      if (!(err instanceof LostRace)) throw err;
      stored = (await ctx.jobs.read(stored.job.id)) ?? stored;
      return false;
    }
  };
  const { job } = stored;
  if (job.round > 0 && !job.marked) {
    // Re-open the failed rows before anything is sent: once an envelope runs, its items must find them open.
    const ids = (await ctx.files.readRoundItems(job.id, job.round)) ?? [];
    await ctx.results.reopen(job.id, job.round, ids);
    if (!(await advance({ marked: true }))) return stored;
  }
  const envelopes = await roundEnvelopes(ctx, stored.job, input);
  if (envelopes.length !== stored.job.envelopes) {
    throw new AppError(
      'CorruptState',
      `Job ${job.id} round ${job.round} packs into ${envelopes.length} envelopes, not the ${stored.job.envelopes} recorded`,
    );
  }
  const parallel = ctx.settings.enqueueParallelism;
  while (stored.job.cursor < envelopes.length) {
    const from = stored.job.cursor;
    const batch = envelopes.slice(from, from + parallel);
    await sendAll(batch.map((envelope, i) => ctx.queues.send(envelopeQueue(ctx, job, from + i), envelope, 0)));
    if (!(await advance({ cursor: from + batch.length }))) return stored;
  }
  const now = ctx.clock.now();
  try {
    stored = await ctx.jobs.update(
      { ...stored.job, phase: 'enqueued', enqueuedAt: now, lease: '', leaseUntil: 0, updatedAt: now },
      stored.etag,
    );
  } catch (err) {
    if (!(err instanceof LostRace)) throw err;
    stored = (await ctx.jobs.read(job.id)) ?? stored;
  }
  ctx.logger.log('info', 'jobs.enqueued', { job: job.id, round: job.round, envelopes: envelopes.length });
  return stored;
}
