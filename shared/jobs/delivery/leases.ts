/**
 * Leases: how a declared processor's items reach its workers (and the pusher, for a webhook).
 *
 * - Taking: one message of the processor's queue, received invisible for the lease. Items already
 *   final (an earlier completion) are left out; an item's attempt is the envelope's `a` plus the
 *   deliveries before this one, so a lease that ran out, or an item a completion did not mention,
 *   counts as an attempt when it comes back; past the processor's maxAttempts it fails with the
 *   reason. A job that is finished, cancelled or gone has its message deleted.
 * - Extending: the message's visibility moved on with its pop receipt; the old lease id is spent.
 * - Completing: checked against the lease id alone (MAC, end, the items' tags), then the message is
 *   held a little longer with its receipt (which proves the lease still holds it: a completion after
 *   it ran out, or a second one, is a 409 and changes nothing), the final results are recorded
 *   insert-if-absent (each exactly once however often the message travels), and the message is
 *   deleted, or — with items to retry or not mentioned — made visible again after the back-off.
 */
import { AppError, validationError } from '../../errors';
import { mapLimited } from '../../mapLimited';
import { checkCompletion } from '../ledger/complete';
import type { JobsContext } from '../context';
import { type Envelope, type EnvelopeEntry, isClaimCheck, type JsonObject, type JsonValue } from '../envelopes/envelope';
import { type Lease, leaseAttempt, leaseEntry, leaseSize, leaseTags, openLease, renewed, sealLease } from './leaseId';
import type { ReceivedMessage } from './leaseHub';
import { type DeclaredProcessor, processorQueueName, pushLeaseMarginSeconds, retryDelaySeconds } from '../processors/processorDefinition';
import { envelopeMessage } from '../envelopes/queues';
import { ReceiptLost } from './processorQueues';
import { type ItemResult, maxOutputChars, maxReasonChars } from '../ledger/resultStore';
import { openEnvelope } from '../envelopes/seal';

interface LeasedItem {
  readonly id: string;
  readonly jobId: string;
  readonly attempt: number;
  readonly data: JsonObject;
}

export interface Granted {
  readonly leaseId: string;
  readonly lease: Lease;
  /** When it was granted, on the app's clock (the lease's length is counted from here to `lease.expiresAt`). */
  readonly grantedAt: number;
  readonly items: readonly LeasedItem[];
  /** The leased part of the envelope, with the attempts it had (the pusher puts it back unchanged on a 429). */
  readonly entries: readonly EnvelopeEntry[];
  readonly envelope: Envelope;
  readonly dequeueCount: number;
}

export type ItemVerdict =
  | { readonly id: string; readonly status: 'succeeded'; readonly output?: JsonValue }
  | { readonly id: string; readonly status: 'failed'; readonly code: string; readonly reason: string }
  | { readonly id: string; readonly status: 'retry'; readonly reason: string };

export interface CompletionReport {
  readonly recorded: number;
  readonly alreadyFinal: number;
  /** Items that come back later (retry, or not mentioned), counted as an attempt. */
  readonly retrying: number;
  readonly jobFinished: boolean;
}

/** How long a completion holds the message while it records (the message is deleted or re-timed after). */
const holdSeconds = 60;

function leaseSeconds(processor: DeclaredProcessor): number {
  return processor.type === 'webhook' ? processor.timeoutSeconds + pushLeaseMarginSeconds : processor.leaseSeconds;
}

async function declaredProcessor(ctx: JobsContext, name: string): Promise<DeclaredProcessor> {
  const processor = await ctx.declared.get(name);
  if (processor === undefined) {
    const inApp = ctx.processors.has(name) ? ` (${name} runs inside the app: its items are not leased)` : '';
    throw new AppError('NotFound', `No declared processor ${name}${inApp}`);
  }
  return processor;
}

function queueOf(ctx: JobsContext, processor: DeclaredProcessor): string {
  return processorQueueName(ctx.settings.queuePrefix, processor.name);
}

async function dropMessage(ctx: JobsContext, queue: string, message: ReceivedMessage): Promise<void> {
  await ctx.processorQueues.delete(queue, message.messageId, message.popReceipt).catch((err: unknown) => {
    if (!(err instanceof ReceiptLost)) throw err;
  });
}

/** Records items as failed (insert-if-absent) and checks the job: nothing of an authentic envelope is dropped unrecorded. */
async function failItems(
  ctx: JobsContext,
  head: { j: string; e: string; r: number; n: number },
  items: readonly { id: string; attempts: number; claimCheck: boolean }[],
  code: string,
  reason: string,
): Promise<void> {
  const results: ItemResult[] = items.map((item) => ({
    id: item.id,
    status: 'failed',
    code,
    reason: reason.slice(0, maxReasonChars),
    attempts: item.attempts,
    envelope: head.e,
    claimCheck: item.claimCheck,
  }));
  if (results.length > 0) await ctx.results.record(head.j, head.r, results, false);
  await checkCompletion(ctx, head.j, head.n);
}

function splitId(envelope: string, dequeueCount: number): string {
  return `${envelope.slice(0, 56)}:s${dequeueCount}`;
}

/**
 * Turns a received message into a lease, or undefined when nothing in it is to be leased (the
 * message is then dealt with: deleted, its items recorded).
 */
async function grant(
  ctx: JobsContext,
  processor: DeclaredProcessor,
  message: ReceivedMessage,
  maxItems: number,
): Promise<Granted | undefined> {
  const queue = queueOf(ctx, processor);
  const signer = await ctx.signer();
  const opened = openEnvelope(Buffer.from(message.text, 'base64').toString('utf8'), signer);
  if (!opened.ok) {
    ctx.logger.log('error', 'jobs.lease_envelope_rejected', { queue, reason: opened.reason, authentic: opened.authentic !== undefined });
    if (opened.authentic !== undefined) {
      const head = opened.authentic;
      const items = head.ids.map((id) => ({ id, attempts: message.dequeueCount, claimCheck: false }));
      await failItems(ctx, head, items, 'unprocessable', `The envelope cannot be processed: ${opened.reason}`);
    }
    await dropMessage(ctx, queue, message);
    return undefined;
  }
  const { envelope } = opened;
  if (envelope.p !== processor.name) {
    // Never hand one processor's items to another's workers.
    ctx.logger.log('error', 'jobs.lease_wrong_processor', { queue, job: envelope.j, envelope: envelope.e, names: envelope.p });
    const items = envelope.i.map((e) => ({ id: e.id, attempts: e.a, claimCheck: isClaimCheck(e) }));
    await failItems(ctx, envelope, items, 'unprocessable', `The envelope names processor ${envelope.p}, not ${processor.name}`);
    await dropMessage(ctx, queue, message);
    return undefined;
  }
  const stored = await ctx.jobs.read(envelope.j);
  if (stored === undefined || stored.job.cancelledAt !== null || stored.job.phase === 'cancelled') {
    await dropMessage(ctx, queue, message);
    return undefined;
  }
  const dq = message.dequeueCount;
  let entries = envelope.i;
  if (dq > 1 || envelope.r > 0) {
    const rows = await ctx.results.readRows(
      envelope.j,
      entries.map((e) => e.id),
    );
    entries = entries.filter((e) => {
      const row = rows.get(e.id);
      return row === undefined || (row.status === 'retrying' && row.round <= envelope.r);
    });
  }
  const attemptOf = (e: EnvelopeEntry): number => e.a + dq - 1;
  const spent = entries.filter((e) => attemptOf(e) > processor.maxAttempts);
  if (spent.length > 0) {
    const reason = `No result came back for it (its lease ran out, or a completion left it out) (gave up after ${processor.maxAttempts} attempts)`;
    await failItems(
      ctx,
      envelope,
      spent.map((e) => ({ id: e.id, attempts: processor.maxAttempts, claimCheck: isClaimCheck(e) })),
      'noResult',
      reason,
    );
    entries = entries.filter((e) => attemptOf(e) <= processor.maxAttempts);
  }
  if (entries.length === 0) {
    await dropMessage(ctx, queue, message);
    await checkCompletion(ctx, envelope.j, envelope.n);
    return undefined;
  }
  let popReceipt = message.popReceipt;
  let leased = entries;
  const leaseMs = leaseSeconds(processor) * 1000;
  let leasedAt = message.receivedAt;
  if (entries.length > maxItems) {
    // The message is cut to what is leased; the rest (when the worker asked for fewer) goes on as a
    // message of its own, at the attempt it is at, visible at once.
    leased = entries.slice(0, maxItems);
    const rest = entries.slice(maxItems).map((e) => ({ ...e, a: attemptOf(e) }));
    if (rest.length > 0) {
      await ctx.queues.send(queue, { ...envelope, e: splitId(envelope.e, dq), i: rest }, 0);
      ctx.wake(queue);
    }
    leasedAt = ctx.clock.now();
    try {
      popReceipt = await ctx.processorQueues.update(
        queue,
        message.messageId,
        popReceipt,
        leaseSeconds(processor),
        envelopeMessage({ ...envelope, i: leased }, signer),
      );
    } catch (err) {
      if (err instanceof ReceiptLost) return undefined;
      throw err;
    }
  }
  const datas = await mapLimited(leased, ctx.settings.itemConcurrency, async (e) =>
    isClaimCheck(e) ? (JSON.parse(await ctx.files.redeem(e.c)) as JsonObject) : e.d,
  );
  const lease: Lease = {
    processor: processor.name,
    queue,
    messageId: message.messageId,
    popReceipt,
    // The queue's own clock started the visibility after this instance sent the request, so this end is never later than its.
    expiresAt: leasedAt + leaseMs,
    jobId: envelope.j,
    round: envelope.r,
    envelope: envelope.e,
    jobItems: envelope.n,
    tags: leaseTags(
      signer,
      envelope.j,
      leased.map((e) => ({ id: e.id, attempt: attemptOf(e), claimCheck: isClaimCheck(e) })),
    ),
  };
  const items = leased.map((e, i) => ({ id: e.id, jobId: envelope.j, attempt: attemptOf(e), data: datas[i] as JsonObject }));
  ctx.logger.log('debug', 'jobs.leased', {
    processor: processor.name,
    job: envelope.j,
    envelope: envelope.e,
    items: items.length,
    dequeueCount: dq,
  });
  return { leaseId: sealLease(lease, signer), lease, grantedAt: ctx.clock.now(), items, entries: leased, envelope, dequeueCount: dq };
}

export interface TakeOptions {
  /** At most this many items (default and ceiling: the processor's batchSize). */
  readonly maxItems?: number;
  /** How long to wait for a batch when there is none (0: answer at once). */
  readonly waitSeconds: number;
}

/** A lease on the next batch of `name`'s items, or undefined when none came within the wait. */
export async function takeLease(ctx: JobsContext, name: string, options: TakeOptions): Promise<Granted | undefined> {
  const processor = await declaredProcessor(ctx, name);
  if (processor.type !== 'external') {
    throw new AppError('Conflict', `${name} is a webhook processor: the app pushes its batches, they are not leased`);
  }
  const maxItems = Math.min(options.maxItems ?? processor.batchSize, processor.batchSize);
  const deadline = ctx.clock.now() + options.waitSeconds * 1000;
  const queue = queueOf(ctx, processor);
  for (;;) {
    const message = await ctx.leaseHub.next(queue, leaseSeconds(processor), deadline);
    if (message === undefined) return undefined;
    const granted = await grant(ctx, processor, message, maxItems);
    if (granted !== undefined) return granted;
    if (ctx.clock.now() >= deadline) return undefined;
  }
}

/** Up to `count` leases of `processor` at once without waiting (the pusher). */
export async function takeLeases(ctx: JobsContext, processor: DeclaredProcessor, count: number): Promise<Granted[]> {
  const queue = queueOf(ctx, processor);
  const receivedAt = ctx.clock.now();
  const messages = await ctx.processorQueues.receive(queue, Math.min(32, count), leaseSeconds(processor));
  const granted = await Promise.all(messages.map((m) => grant(ctx, processor, { ...m, receivedAt }, processor.batchSize)));
  return granted.filter((g): g is Granted => g !== undefined);
}

async function openHeld(ctx: JobsContext, leaseId: string): Promise<{ lease: Lease; processor: DeclaredProcessor }> {
  const lease = openLease(leaseId, await ctx.signer());
  if (lease === undefined) throw new AppError('NotFound', 'Not a lease of this app (or it was altered)');
  if (ctx.clock.now() >= lease.expiresAt) {
    throw new AppError(
      'Conflict',
      `The lease expired at ${new Date(lease.expiresAt).toISOString()}; its items come back in another lease`,
      {
        extra: { reason: 'leaseExpired' },
      },
    );
  }
  const stored = await ctx.jobs.read(lease.jobId);
  if (stored === undefined) throw new AppError('NotFound', `Job ${lease.jobId} no longer exists`);
  if (stored.job.cancelledAt !== null) {
    await ctx.processorQueues.delete(lease.queue, lease.messageId, lease.popReceipt).catch(() => undefined);
    throw new AppError('Conflict', `Job ${lease.jobId} was cancelled: its leases are refused`, { extra: { reason: 'jobCancelled' } });
  }
  return { lease, processor: await declaredProcessor(ctx, lease.processor) };
}

function lost(): AppError {
  return new AppError('Conflict', 'The lease no longer holds its batch (it was completed, extended under a newer lease id, or ran out)', {
    extra: { reason: 'leaseLost' },
  });
}

/** A heartbeat: the lease lasts another lease duration from now, under a new lease id (the old one is spent). */
export async function extendLease(ctx: JobsContext, leaseId: string): Promise<{ leaseId: string; expiresAt: number }> {
  const { lease, processor } = await openHeld(ctx, leaseId);
  const at = ctx.clock.now();
  let popReceipt: string;
  try {
    popReceipt = await ctx.processorQueues.update(lease.queue, lease.messageId, lease.popReceipt, leaseSeconds(processor));
  } catch (err) {
    if (err instanceof ReceiptLost) throw lost();
    throw err;
  }
  const next = renewed(lease, popReceipt, at + leaseSeconds(processor) * 1000);
  return { leaseId: sealLease(next, await ctx.signer()), expiresAt: next.expiresAt };
}

/** Checks every verdict names an item of the lease, once; the 400 names the result and the item. */
function checkVerdicts(ctx: JobsContext, lease: Lease, verdicts: readonly ItemVerdict[], signer: Parameters<typeof leaseEntry>[0]) {
  const seen = new Set<string>();
  const issues = verdicts.flatMap((v, i) => {
    if (seen.has(v.id)) return [{ path: `body.results.${i}.id`, message: `"${v.id}" has a result earlier in the list` }];
    seen.add(v.id);
    if (leaseEntry(signer, lease, v.id) === undefined)
      return [{ path: `body.results.${i}.id`, message: `"${v.id}" is not an item of this lease` }];
    if (v.status === 'succeeded' && JSON.stringify(v.output ?? null).length > maxOutputChars) {
      return [{ path: `body.results.${i}.output`, message: `larger than ${maxOutputChars} characters of JSON` }];
    }
    return [];
  });
  if (issues.length > 0) throw validationError('The results do not fit the lease', issues.slice(0, 20));
  if (verdicts.length > ctx.settings.maxItems) throw validationError('Too many results', []);
}

/** Records a lease's results; see the module comment for what happens to each kind. */
export async function completeLease(ctx: JobsContext, leaseId: string, verdicts: readonly ItemVerdict[]): Promise<CompletionReport> {
  const { lease, processor } = await openHeld(ctx, leaseId);
  const signer = await ctx.signer();
  checkVerdicts(ctx, lease, verdicts, signer);
  let popReceipt: string;
  try {
    popReceipt = await ctx.processorQueues.update(lease.queue, lease.messageId, lease.popReceipt, holdSeconds);
  } catch (err) {
    if (err instanceof ReceiptLost) throw lost();
    throw err;
  }
  const finals: ItemResult[] = [];
  let retryAttempt = 0;
  for (const v of verdicts) {
    const entry = leaseEntry(signer, lease, v.id) as { attempt: number; claimCheck: boolean };
    const common = { id: v.id, attempts: entry.attempt, envelope: lease.envelope, claimCheck: entry.claimCheck };
    if (v.status === 'succeeded') finals.push({ ...common, status: 'succeeded', output: v.output ?? null });
    else if (v.status === 'failed') finals.push({ ...common, status: 'failed', code: v.code, reason: v.reason.slice(0, maxReasonChars) });
    else if (entry.attempt >= processor.maxAttempts) {
      finals.push({
        ...common,
        status: 'failed',
        code: 'retriesExhausted',
        reason: `${v.reason} (gave up after ${entry.attempt} attempts)`.slice(0, maxReasonChars),
      });
    } else retryAttempt = Math.max(retryAttempt, entry.attempt);
  }
  const recorded = await ctx.results.record(lease.jobId, lease.round, finals, true);
  const pending = leaseSize(lease) - finals.length;
  if (pending === 0) {
    await ctx.processorQueues.delete(lease.queue, lease.messageId, popReceipt).catch((err: unknown) => {
      if (!(err instanceof ReceiptLost)) throw err;
    });
  } else {
    // What is left comes back after the back-off of its next attempt (not mentioned: as if retried).
    const next = Math.max(retryAttempt, leaseAttempt(lease)) + 1;
    await ctx.processorQueues
      .update(lease.queue, lease.messageId, popReceipt, retryDelaySeconds(processor.retry, next))
      .catch((err: unknown) => {
        if (!(err instanceof ReceiptLost)) throw err;
      });
  }
  const jobFinished = await checkCompletion(ctx, lease.jobId, lease.jobItems);
  ctx.logger.log('debug', 'jobs.lease_completed', {
    processor: lease.processor,
    job: lease.jobId,
    envelope: lease.envelope,
    recorded: recorded.recorded,
    retrying: pending,
  });
  return { recorded: recorded.recorded, alreadyFinal: recorded.alreadyFinal, retrying: pending, jobFinished };
}

/**
 * Puts a leased batch back without counting the attempt (an endpoint that answered 429): the items
 * go into a new message at the attempt they are at, visible after `delaySeconds`, and the leased
 * message is deleted.
 */
export async function deferLease(ctx: JobsContext, granted: Granted, delaySeconds: number): Promise<void> {
  const { lease, envelope, entries, dequeueCount } = granted;
  await ctx.queues.send(
    lease.queue,
    { ...envelope, e: splitId(envelope.e, dequeueCount), i: entries.map((e) => ({ ...e, a: e.a + dequeueCount - 1 })) },
    delaySeconds,
  );
  await ctx.processorQueues.delete(lease.queue, lease.messageId, lease.popReceipt).catch((err: unknown) => {
    if (!(err instanceof ReceiptLost)) throw err;
  });
}
