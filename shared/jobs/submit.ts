/**
 * Submitting a job. Everything that can reject the request is checked before the first write, so a
 * 400 or 413 leaves no trace. Then, in this order: the input blob, the `open` index entry, the job
 * row (phase `enqueuing`, with the enqueue lease), the envelopes. With an Idempotency-Key the job id
 * is derived from the key: a resubmission reads the job, checks it carries the same items, and
 * finishes an enqueue that a crash interrupted, from the cursor on.
 */
import { AppError, validationError } from '../errors';
import { enqueueLeaseMs, type JobsContext } from './context';
import { claimEnqueue, roundEnvelopes, runEnqueue } from './enqueue';
import { jobIdForKey, newJobId } from './jobIds';
import { buildInput, type InputFile } from './input';
import type { JobRecord, StoredJob } from './jobRecord';

export interface SubmitRequest {
  readonly processor: string;
  readonly items: readonly { readonly id: string }[];
}

export interface SubmitResult {
  readonly job: JobRecord;
  /** True when an earlier submission with the same Idempotency-Key created the job. */
  readonly replayed: boolean;
}

/**
 * Every check that can refuse a submission (processor, TALLYHO_JOBS_MAX_ITEMS, unique ids,
 * TALLYHO_JOBS_MAX_ITEM_BYTES), without I/O: other capabilities that submit jobs later (a gated run's
 * `job` action) run it when they accept the request, so a job they cannot submit is refused up front.
 */
export function checkSubmission(ctx: JobsContext, request: SubmitRequest): InputFile {
  const { settings } = ctx;
  if (!ctx.processors.has(request.processor)) {
    throw validationError('Unknown processor', [
      { path: 'body.processor', message: `Use one of: ${[...ctx.processors.keys()].join(', ')}` },
    ]);
  }
  if (request.items.length > settings.maxItems) {
    throw new AppError(
      'PayloadTooLarge',
      `The job has ${request.items.length} items; at most ${settings.maxItems} are accepted (TALLYHO_JOBS_MAX_ITEMS)`,
    );
  }
  const seen = new Map<string, number>();
  const duplicates = request.items.flatMap((item, i) => {
    const first = seen.get(item.id);
    if (first === undefined) seen.set(item.id, i);
    return first === undefined ? [] : [{ path: `body.items.${i}.id`, message: `"${item.id}" is also the id of items.${first}` }];
  });
  if (duplicates.length > 0) throw validationError('Item ids must be unique within a job', duplicates.slice(0, 20));
  const input = buildInput(request.items);
  const oversize = input.items.flatMap((item, i) =>
    item.bytes > settings.maxItemBytes
      ? [{ path: `body.items.${i}`, message: `${item.bytes} bytes; at most ${settings.maxItemBytes}` }]
      : [],
  );
  if (oversize.length > 0) {
    throw new AppError('PayloadTooLarge', `Items larger than TALLYHO_JOBS_MAX_ITEM_BYTES (${settings.maxItemBytes} bytes)`, {
      issues: oversize.slice(0, 20),
    });
  }
  return input;
}

/** A resubmission with the same key: same items, or 409; then finish the enqueue if it was interrupted. */
async function resume(ctx: JobsContext, existing: StoredJob, request: SubmitRequest, input: InputFile): Promise<SubmitResult> {
  const { job } = existing;
  if (job.inputSha256 !== input.sha256 || job.processor !== request.processor) {
    // The job is not named: a caller who guessed someone else's key learns nothing of their job.
    throw new AppError('Conflict', 'The Idempotency-Key was first used for a different job submission');
  }
  if (job.phase !== 'enqueuing' || job.round !== 0) return { job, replayed: true };
  const claimed = await claimEnqueue(ctx, existing, ctx.newLease());
  if (claimed === undefined) return { job, replayed: true };
  ctx.logger.log('warn', 'jobs.enqueue_resumed', { job: job.id, by: 'resubmission', cursor: job.cursor, envelopes: job.envelopes });
  return { job: (await runEnqueue(ctx, claimed, input)).job, replayed: true };
}

/**
 * TALLYHO_JOBS_MAX_OPEN: each unfinished job holds queue messages, rows and blobs, and callers may
 * submit as fast as they like. Counted from the `open` index (one partition, keys only), so it
 * is a soft cap: submissions racing on several instances may pass it by their number. A 429: jobs
 * finish, so waiting frees room.
 */
async function checkOpenRoom(ctx: JobsContext): Promise<void> {
  const max = ctx.settings.maxOpen;
  if ((await ctx.jobs.listOpen(max)).length < max) return;
  throw new AppError('TooManyRequests', `${max} jobs are unfinished (TALLYHO_JOBS_MAX_OPEN); submit again once some finish`, {
    retryAfterSeconds: 30,
    extra: { limit: 'TALLYHO_JOBS_MAX_OPEN', max },
  });
}

export interface SubmitOptions {
  /** Refuse a new job while TALLYHO_JOBS_MAX_OPEN are unfinished (the HTTP route; a gated run or a schedule is bounded by its own caps). */
  readonly limitOpen?: boolean;
}

export async function submitJob(
  ctx: JobsContext,
  request: SubmitRequest,
  key: string | undefined,
  options: SubmitOptions = {},
): Promise<SubmitResult> {
  const input = checkSubmission(ctx, request);
  const now = ctx.clock.now();
  const id = key === undefined ? newJobId(now) : jobIdForKey(key, await ctx.signer());
  if (key !== undefined) {
    const existing = await ctx.jobs.read(id);
    if (existing !== undefined) return resume(ctx, existing, request, input);
  }
  if (options.limitOpen === true) await checkOpenRoom(ctx);
  const { settings } = ctx;
  const lease = ctx.newLease();
  const draft: JobRecord = {
    id,
    processor: request.processor,
    items: input.items.length,
    inputSha256: input.sha256,
    inputBytes: input.bytes,
    pack: { maxItems: settings.envelopeMaxItems, maxBytes: settings.envelopeMaxBytes, claimCheckBytes: settings.claimCheckBytes },
    phase: 'enqueuing',
    round: 0,
    envelopes: 0,
    cursor: 0,
    roundItems: input.items.length,
    marked: true,
    lease,
    leaseUntil: now + enqueueLeaseMs,
    acceptedAt: now,
    enqueuedAt: null,
    startedAt: null,
    lastResultAt: null,
    completedAt: null,
    updatedAt: now,
    succeeded: null,
    failed: null,
    summary: null,
    delivery: 'none',
    event: 'none',
  };
  const job: JobRecord = { ...draft, envelopes: (await roundEnvelopes(ctx, draft, input)).length };
  await ctx.files.writeInput(job, input.text);
  await ctx.jobs.markOpen(id, now);
  const created = await ctx.jobs.create(job);
  if (created === undefined) {
    // The same key, submitted concurrently, created it first.
    const existing = await ctx.jobs.read(id);
    if (existing === undefined) throw new AppError('Conflict', 'The job is being created concurrently; retry');
    return resume(ctx, existing, request, input);
  }
  ctx.logger.log('info', 'jobs.accepted', { job: id, processor: job.processor, items: job.items, envelopes: job.envelopes });
  return { job: (await runEnqueue(ctx, created, input)).job, replayed: false };
}
