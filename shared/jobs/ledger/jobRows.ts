/**
 * The job row's changes, each a conditional write (the row's ETag) named for what it does: ledger/
 * is where job state is written, so the phase moves through its transitions in one place
 * (./jobRecord.ts draws them). Submission opens a job (the `open` index entry, a place among
 * TALLYHO_JOBS_MAX_OPEN, the row); the enqueuer holds a lease while it sends a round's envelopes and
 * moves its cursor; a cancel marks the job; retry-failed starts a round. Completion's own writes are
 * ./completion.ts's. A write that lost to another writer surfaces as `LostRace` or, where the caller
 * only needs the row as it now is, as that row.
 */
import type { Clock } from '../../clock';
import { AppError } from '../../errors';
import { LostRace } from '../../retry';
import type { Page, PageRequest } from '../../storage/list';
import { isFinished, jobNotFound, type JobRecord, type StoredJob } from './jobRecord';
import type { JobStore } from './jobStore';

/** How long an enqueuer's claim on a job lasts without progress (renewed with every batch sent). */
export const enqueueLeaseMs = 15_000;

/** The 429 of a full TALLYHO_JOBS_MAX_OPEN: jobs finish, so waiting frees room. */
export function tooManyOpen(max: number): AppError {
  return new AppError('TooManyRequests', `${max} jobs are unfinished (TALLYHO_JOBS_MAX_OPEN); submit again once some finish`, {
    retryAfterSeconds: 30,
    extra: { limit: 'TALLYHO_JOBS_MAX_OPEN', max },
  });
}

/** The 429 of an owner holding TALLYHO_JOBS_MAX_OPEN_PER_OWNER unfinished jobs: its jobs finish, so waiting frees room. */
export function tooManyOpenOfOwner(share: number): AppError {
  return new AppError(
    'TooManyRequests',
    `You already have ${share} unfinished jobs (TALLYHO_JOBS_MAX_OPEN_PER_OWNER); submit again once some finish. Others keep their places`,
    { retryAfterSeconds: 30, extra: { limit: 'TALLYHO_JOBS_MAX_OPEN_PER_OWNER', max: share } },
  );
}

/**
 * The places among TALLYHO_JOBS_MAX_OPEN: a capped set of job ids (shared/storage/cappedSet.ts),
 * fair shares by owner (TALLYHO_JOBS_MAX_OPEN_PER_OWNER).
 */
export interface OpenSlots {
  admit(jobId: string, owner: string): Promise<void>;
  release(jobId: string): Promise<boolean>;
}

export interface JobRowsDeps {
  readonly jobs: JobStore;
  readonly slots: OpenSlots;
  readonly clock: Clock;
}

export class JobRows {
  constructor(private readonly deps: JobRowsDeps) {}

  read(id: string): Promise<StoredJob | undefined> {
    return this.deps.jobs.read(id);
  }

  /** The job; 404 when it does not exist. */
  async require(id: string): Promise<StoredJob> {
    const stored = await this.deps.jobs.read(id);
    if (stored === undefined) throw jobNotFound(id);
    return stored;
  }

  /** A page of jobs; with `owner`, only that owner's. */
  list(page: PageRequest, owner?: string): Promise<Page<JobRecord>> {
    return this.deps.jobs.list(page, owner);
  }

  listOpen(limit: number, after?: string): Promise<{ id: string; since: number; etag: string }[]> {
    return this.deps.jobs.listOpen(limit, after);
  }

  /** The reconciler's place in the `open` index, kept in the jobs table so a pass on any instance goes on from the last. */
  reconcileCursor(): Promise<string> {
    return this.deps.jobs.reconcileCursor();
  }

  setReconcileCursor(after: string): Promise<void> {
    return this.deps.jobs.setReconcileCursor(after);
  }

  /**
   * Opens a job about to be created: its `open` index entry first — should this instance die after
   * taking a place, the reconciler finds the entry without a job row and gives the place back — then,
   * with `owner` (a Caller id), a place among TALLYHO_JOBS_MAX_OPEN within that owner's share. A
   * refused place stores nothing.
   */
  async open(id: string, at: number, owner: string | undefined): Promise<void> {
    await this.deps.jobs.markOpen(id, at);
    if (owner === undefined) return;
    try {
      await this.deps.slots.admit(id, owner);
    } catch (err) {
      await this.deps.jobs.clearOpen(id);
      throw err;
    }
  }

  /** Inserts the job; undefined when a job with its id exists already. */
  create(job: JobRecord): Promise<StoredJob | undefined> {
    return this.deps.jobs.create(job);
  }

  /**
   * What stands where a job row could not be created: a job (`job`), or the reconciler's tombstone of
   * this submission (see `dropDebris`). A `buried` one is removed here (`cleared`): its place went
   * back, so the submitter opens the job again — a new place, or the refusal a full cap gives — and
   * creates it. A `burying` one is mid-way (`burying`): the submission answers 503, and its retry
   * finds it buried.
   */
  async clearTombstone(id: string): Promise<'job' | 'burying' | 'cleared'> {
    const tombstone = await this.deps.jobs.tombstone(id);
    if (tombstone === undefined) return 'job';
    if (tombstone.phase === 'burying') return 'burying';
    try {
      await this.deps.jobs.unbury(id, tombstone.etag);
    } catch (err) {
      // Another attempt of the same submission removed it first: the row is whatever that one made.
      if (!(err instanceof LostRace)) throw err;
    }
    return 'cleared';
  }

  /** Takes the enqueue lease (ours, or one that ran out); undefined when someone else is enqueuing. */
  async claimEnqueue(stored: StoredJob, lease: string): Promise<StoredJob | undefined> {
    const { job } = stored;
    const now = this.deps.clock.now();
    if (job.phase !== 'enqueuing') return undefined;
    if (job.lease === lease) return stored;
    if (job.leaseUntil > now) return undefined;
    try {
      return await this.deps.jobs.update({ ...job, lease, leaseUntil: now + enqueueLeaseMs, updatedAt: now }, stored.etag);
    } catch (err) {
      if (err instanceof LostRace) return undefined;
      throw err;
    }
  }

  /**
   * Moves an enqueue on (`marked`, the cursor) and renews its lease. `kept: false` when the job changed
   * under it (another enqueuer took over, or the job completed): `stored` is then the job as it is.
   */
  async advanceEnqueue(
    stored: StoredJob,
    change: Partial<Pick<JobRecord, 'cursor' | 'marked'>>,
  ): Promise<{ stored: StoredJob; kept: boolean }> {
    const now = this.deps.clock.now();
    try {
      const next = await this.deps.jobs.update({ ...stored.job, ...change, leaseUntil: now + enqueueLeaseMs, updatedAt: now }, stored.etag);
      return { stored: next, kept: true };
    } catch (err) {
      if (!(err instanceof LostRace)) throw err;
      return { stored: (await this.deps.jobs.read(stored.job.id)) ?? stored, kept: false };
    }
  }

  /** Every envelope of the round is sent: the job is `enqueued` (or, if it changed meanwhile, as it now is). */
  async markEnqueued(stored: StoredJob): Promise<StoredJob> {
    const now = this.deps.clock.now();
    try {
      return await this.deps.jobs.update(
        { ...stored.job, phase: 'enqueued', enqueuedAt: now, lease: '', leaseUntil: 0, updatedAt: now },
        stored.etag,
      );
    } catch (err) {
      if (!(err instanceof LostRace)) throw err;
      return (await this.deps.jobs.read(stored.job.id)) ?? stored;
    }
  }

  /**
   * A new round (retry-failed): the job is in the open index again and back to `enqueuing`; LostRace
   * when it changed. Unfinished again, it takes a place among TALLYHO_JOBS_MAX_OPEN again (the
   * owner's share applies; a full cap refuses the round, and nothing changes but the `open` entry,
   * which the reconciler clears). Two retries racing take one place: it is the job's.
   */
  async startRound(stored: StoredJob, next: JobRecord): Promise<StoredJob> {
    await this.deps.jobs.markOpen(next.id, next.updatedAt);
    if (next.owner !== undefined) await this.deps.slots.admit(next.id, next.owner);
    return this.deps.jobs.update(next, stored.etag);
  }

  /** Marks an unfinished job cancelled (`cancelledAt`); a cancelled one answers as it is; 409 once it finished. */
  async markCancelled(id: string): Promise<JobRecord> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const stored = await this.require(id);
      const { job } = stored;
      if (job.cancelledAt !== null || job.phase === 'cancelled') return job;
      if (isFinished(job.phase) || job.phase === 'finalizing') {
        throw new AppError('Conflict', `Job ${id} has finished (${job.phase}); only an unfinished job can be cancelled`, {
          extra: { state: job.phase },
        });
      }
      const now = this.deps.clock.now();
      try {
        return (await this.deps.jobs.update({ ...job, cancelledAt: now, updatedAt: now }, stored.etag)).job;
      } catch (err) {
        if (!(err instanceof LostRace)) throw err;
      }
    }
    throw new AppError('ConcurrencyExhausted', `Job ${id} keeps changing; try again`, { retryAfterSeconds: 1 });
  }

  /** Gives back the job's place among TALLYHO_JOBS_MAX_OPEN (a finished job's; harmless when it has none). */
  releasePlace(id: string): Promise<boolean> {
    return this.deps.slots.release(id);
  }

  /**
   * An `open` entry (read at `openEtag`) whose job row is still missing after the stale time: its
   * submitter died between the two, or is that slow. A tombstone takes the job row's key first, so a
   * submitter still on its way cannot create the job without finding it (`clearTombstone`); then the
   * place goes back, the tombstone says so, and the entry goes — unless the submitter wrote a newer
   * one meanwhile. Without the tombstone, a slow submission created its job after its place had gone
   * back, and the cap counted one job fewer than were open (the scale-out soak saw 7 open with a cap
   * of 6). Reconcile passes run one at a time (the timer's singleton lock), so no other pass releases
   * a place this one's tombstone is not guarding. False when the job row turned up: not debris.
   */
  async dropDebris(id: string, openEtag: string): Promise<boolean> {
    const { jobs, slots, clock } = this.deps;
    const now = clock.now();
    // A tombstone a pass that died left (either phase) is carried on from where it stopped.
    if (!(await jobs.bury(id, now)) && (await jobs.tombstone(id)) === undefined) return false;
    await slots.release(id);
    await jobs.markBuried(id, now);
    // The retention purge removes the tombstone (and an input file the submitter wrote) in time.
    await jobs.markFinished(id, now);
    await jobs.clearOpen(id, openEtag);
    return true;
  }
}
