/**
 * Submitting a job. Everything that can reject the request is checked before the first write, so a
 * 400 or 413 leaves no trace. Then, in this order: the `open` index entry, a place among
 * TALLYHO_JOBS_MAX_OPEN (a 429, with nothing left stored, when there is none), the input blob, the job row (phase `enqueuing`, with the enqueue lease), the envelopes. With an Idempotency-Key the job id
 * is derived from the key: a resubmission reads the job, checks it carries the same items, and
 * finishes an enqueue that a crash interrupted, from the cursor on.
 */
import { AppError, validationError } from '../../errors';
import { enqueueLeaseMs, type JobsContext, jobsTelemetry } from '../context';
import { claimEnqueue, roundEnvelopes, runEnqueue } from './enqueue';
import { jsonDeeperThan } from '../../jsonDepth';
import { jobIdForKey, type KeySpace, newJobId } from './jobIds';
import { processorNamePattern, processorQueueName } from '../processors/processorDefinition';
import { maxItemDepth } from '../envelopes/seal';
import { buildInput, type InputFile } from '../envelopes/input';
import type { JobRecord, StoredJob } from '../ledger/jobRecord';

export interface SubmitRequest {
  readonly processor: string;
  readonly items: readonly { readonly id: string }[];
}

export interface SubmitResult {
  readonly job: JobRecord;
  /** True when an earlier submission with the same Idempotency-Key created the job. */
  readonly replayed: boolean;
}

/** Where a checked submission's envelopes go and how they are cut. */
interface Checked {
  readonly input: InputFile;
  /** The declared processor's queue, or '' for an in-app processor. */
  readonly queue: string;
  readonly batchSize: number;
}

async function processorRoute(
  ctx: JobsContext,
  request: SubmitRequest,
): Promise<{ queue: string; batchSize: number; schema: Record<string, unknown> | null }> {
  const { settings } = ctx;
  if (ctx.processors.has(request.processor)) return { queue: '', batchSize: settings.envelopeMaxItems, schema: null };
  const declared = processorNamePattern.test(request.processor) ? await ctx.declared.get(request.processor) : undefined;
  if (declared === undefined) {
    throw validationError('Unknown processor', [
      {
        path: 'body.processor',
        message: `Use one of the app's (${[...ctx.processors.keys()].join(', ')}) or a declared processor (PUT /api/processors/{name})`,
      },
    ]);
  }
  return { queue: processorQueueName(settings.queuePrefix, declared.name), batchSize: declared.batchSize, schema: declared.itemSchema };
}

/**
 * Every check that can refuse a submission (processor, TALLYHO_JOBS_MAX_ITEMS, unique ids, the depth
 * an envelope can carry, TALLYHO_JOBS_MAX_ITEM_BYTES, a declared processor's item schema), with no
 * write: other capabilities that submit jobs later (a gated run's `job` action, a schedule's job
 * target) run it when they accept the request, so a job they cannot submit is refused up front.
 */
export async function checkSubmission(ctx: JobsContext, request: SubmitRequest): Promise<Checked> {
  const { settings } = ctx;
  const route = await processorRoute(ctx, request);
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
  // The envelope wraps each item a few levels deeper; an item that fits the request but not the
  // envelope would be sealed into a message no reader accepts.
  const deep = input.items.flatMap((item, i) =>
    jsonDeeperThan(item.line, maxItemDepth)
      ? [{ path: `body.items.${i}`, message: `item "${item.id}" nests deeper than ${maxItemDepth} levels` }]
      : [],
  );
  if (deep.length > 0) throw validationError('Items nest too deeply', deep.slice(0, 20));
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
  if (route.schema !== null) {
    const issues = ctx.itemSchemas.issues(route.schema, request.items);
    if (issues.length > 0) throw validationError(`Items do not match the item schema of ${request.processor}`, issues);
  }
  return { input, queue: route.queue, batchSize: route.batchSize };
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

/** The 429 of a full TALLYHO_JOBS_MAX_OPEN: jobs finish, so waiting frees room. */
export function tooManyOpen(max: number): AppError {
  return new AppError('TooManyRequests', `${max} jobs are unfinished (TALLYHO_JOBS_MAX_OPEN); submit again once some finish`, {
    retryAfterSeconds: 30,
    extra: { limit: 'TALLYHO_JOBS_MAX_OPEN', max },
  });
}

export interface SubmitOptions {
  /**
   * Take a place among TALLYHO_JOBS_MAX_OPEN (the HTTP route): the places are a capped set, so the
   * cap is exact however many instances submit at once; a job gives its place back when it finishes,
   * before its delivery and event. A gated run or a schedule is bounded by its own caps.
   */
  readonly limitOpen?: boolean;
  /** `app`: the key is one the app derived (a schedule's or gated run's), in a space no caller key reaches. */
  readonly keySpace?: KeySpace;
}

export async function submitJob(
  ctx: JobsContext,
  request: SubmitRequest,
  key: string | undefined,
  options: SubmitOptions = {},
): Promise<SubmitResult> {
  const checked = await checkSubmission(ctx, request);
  const { spans } = jobsTelemetry(ctx);
  return spans.submit.run({ attributes: { 'tallyho.job.processor': request.processor } }, async (span) => {
    const result = await submitChecked(ctx, request, checked, key, options, span.traceparent());
    span.setAttributes({ 'tallyho.job.id': result.job.id });
    return result;
  });
}

/** The submission after its checks; `trace` (this span's traceparent) goes with the job to its envelopes. */
async function submitChecked(
  ctx: JobsContext,
  request: SubmitRequest,
  { input, queue, batchSize }: Awaited<ReturnType<typeof checkSubmission>>,
  key: string | undefined,
  options: SubmitOptions,
  trace: string | undefined,
): Promise<SubmitResult> {
  const now = ctx.clock.now();
  const id = key === undefined ? newJobId(now) : jobIdForKey(key, await ctx.signer(), options.keySpace);
  if (key !== undefined) {
    const existing = await ctx.jobs.read(id);
    if (existing !== undefined) return resume(ctx, existing, request, input);
  }
  const { settings } = ctx;
  const lease = ctx.newLease();
  const draft: JobRecord = {
    id,
    processor: request.processor,
    queue,
    items: input.items.length,
    inputSha256: input.sha256,
    inputBytes: input.bytes,
    pack: { maxItems: batchSize, maxBytes: settings.envelopeMaxBytes, claimCheckBytes: settings.claimCheckBytes },
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
    cancelled: null,
    cancelledAt: null,
    summary: null,
    delivery: 'none',
    event: 'none',
    ...(trace === undefined ? {} : { trace }),
  };
  const job: JobRecord = { ...draft, envelopes: (await roundEnvelopes(ctx, draft, input)).length };
  // The index entry first: should this instance die after taking a place, the reconciler finds the
  // entry without a job row and gives the place back. A refused place stores nothing.
  await ctx.jobs.markOpen(id, now);
  if (options.limitOpen === true) {
    try {
      await ctx.slots.admit(id);
    } catch (err) {
      await ctx.jobs.clearOpen(id);
      throw err;
    }
  }
  await ctx.files.writeInput(job, input.text);
  const created = await ctx.jobs.create(job);
  if (created === undefined) {
    // The same key, submitted concurrently, created it first.
    const existing = await ctx.jobs.read(id);
    if (existing === undefined) throw new AppError('Conflict', 'The job is being created concurrently; retry');
    return resume(ctx, existing, request, input);
  }
  ctx.logger.log('info', 'jobs.accepted', { job: id, processor: job.processor, items: job.items, envelopes: job.envelopes });
  const enqueued = (await runEnqueue(ctx, created, input)).job;
  if (queue !== '') ctx.wake(queue);
  return { job: enqueued, replayed: false };
}
