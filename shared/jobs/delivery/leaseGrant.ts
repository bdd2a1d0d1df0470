/**
 * Turning a received message of a declared processor's queue into a lease — the one place leases are
 * handed out, for workers (./leases.ts) and the pusher alike. In order:
 *
 * 1. the message must be an envelope this app sealed, for this processor, of a job that still runs
 *    (otherwise its items are recorded failed with why, or — the job cancelled or gone — it is dropped);
 * 2. items already final (an earlier completion) are left out; an item's attempt is the envelope's
 *    plus the deliveries before this one that a worker received (used the lease of: ../ledger/leaseLog.ts),
 *    so a lease a worker let run out, or an item a completion did not mention, counts as an attempt
 *    when it comes back, and past the processor's maxAttempts it fails — but a batch handed to a long
 *    poll whose caller had gone does not (./itemAttempts.ts, `countedBefore`);
 * 3. more items than asked for: the rest goes on as a message of its own, and this one is cut to what
 *    is leased;
 * 4. the lease: the message's id and pop receipt, its end, and a MAC tag per item (./leaseId.ts) —
 *    handed out only if the job row, read again last, still says the job is not cancelled.
 */
import type { Clock } from '../../clock';
import type { Logger } from '../../log';
import { mapLimited } from '../../mapLimited';
import type { Signer } from '../../signing/signer';
import { type Envelope, type EnvelopeItem, isClaimCheck, type JsonObject } from '../envelopes/envelope';
import type { JobFiles } from '../envelopes/files';
import { envelopeMessage, type EnvelopeQueues } from '../envelopes/queues';
import { openEnvelope } from '../envelopes/seal';
import type { Completion } from '../ledger/completion';
import { isFinished } from '../ledger/jobRecord';
import type { JobRows } from '../ledger/jobRows';
import type { LeaseLog } from '../ledger/leaseLog';
import type { ResultStore } from '../ledger/resultStore';
import { type DeclaredProcessor, processorQueueName, pushLeaseMarginSeconds } from '../processors/processorDefinition';
import { type AttemptRules, countedBefore, gaveUp, isSpent, owedItems } from './itemAttempts';
import type { ReceivedMessage } from './leaseHub';
import { type Lease, leaseTags, sealLease } from './leaseId';
import { type ProcessorQueues, ReceiptLost } from './processorQueues';

interface LeasedItem {
  readonly id: string;
  readonly jobId: string;
  readonly attempt: number;
  readonly data: JsonObject;
  /** The submission's traceparent, so a worker's own spans can continue the job's trace. */
  readonly traceparent?: string;
}

export interface Granted {
  readonly leaseId: string;
  readonly lease: Lease;
  /** When it was granted, on the app's clock (the lease's length is counted from here to `lease.expiresAt`). */
  readonly grantedAt: number;
  readonly items: readonly LeasedItem[];
  /** The leased part of the envelope, with the attempts it had (the pusher puts it back unchanged on a 429). */
  readonly entries: readonly EnvelopeItem[];
  readonly envelope: Envelope;
  readonly dequeueCount: number;
  /** Deliveries before this one that count as attempts (`entries`' attempts plus this are the items'). */
  readonly counted: number;
}

export interface GrantDeps {
  readonly rows: JobRows;
  readonly results: ResultStore;
  readonly leaseLog: LeaseLog;
  readonly files: JobFiles;
  readonly queues: EnvelopeQueues;
  readonly processorQueues: ProcessorQueues;
  readonly completion: Completion;
  /** Tells this instance's waiting lease requests that `queue` has new envelopes. */
  readonly wake: (queue: string) => void;
  readonly settings: { readonly queuePrefix: string; readonly itemConcurrency: number };
  readonly clock: Clock;
  readonly logger: Logger;
}

/** A message received for a lease, where it is, and what the lease is made of so far. */
interface Received {
  readonly processor: DeclaredProcessor;
  readonly queue: string;
  readonly message: ReceivedMessage;
  readonly signer: Signer;
  /** Deliveries of the message before this one that count as attempts. */
  readonly counted: number;
}

/** How long a lease of `processor` lasts: its leaseSeconds, or a push's timeout and a margin to record the answer. */
export function leaseSeconds(processor: DeclaredProcessor): number {
  return processor.type === 'webhook' ? processor.timeoutSeconds + pushLeaseMarginSeconds : processor.leaseSeconds;
}

export function rulesOf(processor: DeclaredProcessor): AttemptRules {
  return { maxAttempts: processor.maxAttempts, retry: processor.retry };
}

/** The id of the message that carries on the items a lease leaves (a split, a batch put back). */
export function splitId(envelope: string, dequeueCount: number): string {
  return `${envelope.slice(0, 56)}:s${dequeueCount}`;
}

export class LeaseGranter {
  constructor(private readonly deps: GrantDeps) {}

  queueOf(processor: DeclaredProcessor): string {
    return processorQueueName(this.deps.settings.queuePrefix, processor.name);
  }

  /** Deletes a message this instance holds; one whose receipt moved on is someone else's now. */
  async drop(queue: string, message: { readonly messageId: string; readonly popReceipt: string }): Promise<void> {
    await this.deps.processorQueues.delete(queue, message.messageId, message.popReceipt).catch((err: unknown) => {
      if (!(err instanceof ReceiptLost)) throw err;
    });
  }

  /**
   * A lease on the received message, or undefined when nothing in it is to be leased (the message is
   * then dealt with: deleted, its items recorded).
   */
  async grant(processor: DeclaredProcessor, message: ReceivedMessage, maxItems: number, signer: Signer): Promise<Granted | undefined> {
    const opened = { processor, queue: this.queueOf(processor), message, signer, counted: 0 };
    const envelope = await this.leasable(opened);
    if (envelope === undefined) return undefined;
    const received: Received = { ...opened, counted: await this.counted(envelope.jobId, message) };
    const items = await this.owed(received, envelope);
    if (items.length === 0) {
      await this.drop(received.queue, message);
      await this.deps.completion.check(envelope.jobId, envelope.jobItems);
      return undefined;
    }
    const held = await this.hold(received, envelope, items, maxItems);
    if (held === undefined) return undefined;
    const granted = await this.leaseOf(received, envelope, held);
    // Read again last: a cancel answered while this batch was prepared leaves no lease of the job after it.
    if (await this.cancelled(envelope.jobId)) {
      await this.drop(received.queue, { messageId: message.messageId, popReceipt: granted.lease.popReceipt });
      return undefined;
    }
    return granted;
  }

  /** The job is gone, being cancelled or finished (expired, say): nothing of it is to be leased. */
  private async cancelled(jobId: string): Promise<boolean> {
    const stored = await this.deps.rows.read(jobId);
    return stored === undefined || stored.job.cancelledAt !== null || isFinished(stored.job.phase);
  }

  /** Step 1: the envelope, when the message is one to lease; otherwise it is dealt with here. */
  private async leasable({ processor, queue, message, signer }: Received): Promise<Envelope | undefined> {
    const { logger, completion } = this.deps;
    const opened = openEnvelope(Buffer.from(message.text, 'base64').toString('utf8'), signer);
    if (!opened.ok) {
      logger.log('error', 'jobs.lease_envelope_rejected', { queue, reason: opened.reason, authentic: opened.authentic !== undefined });
      const head = opened.authentic;
      if (head !== undefined) {
        const items = head.itemIds.map((id) => ({ id, attempts: message.dequeueCount, claimCheck: false }));
        await completion.failItems(head, items, 'unprocessable', `The envelope cannot be processed: ${opened.reason}`);
      }
      await this.drop(queue, message);
      return undefined;
    }
    const { envelope } = opened;
    if (envelope.processor !== processor.name) {
      // Never hand one processor's items to another's workers.
      logger.log('error', 'jobs.lease_wrong_processor', {
        queue,
        job: envelope.jobId,
        envelope: envelope.envelopeId,
        names: envelope.processor,
      });
      const items = envelope.items.map((e) => ({ id: e.id, attempts: e.attempt, claimCheck: isClaimCheck(e) }));
      await completion.failItems(
        envelope,
        items,
        'unprocessable',
        `The envelope names processor ${envelope.processor}, not ${processor.name}`,
      );
      await this.drop(queue, message);
      return undefined;
    }
    if (await this.cancelled(envelope.jobId)) {
      await this.drop(queue, message);
      return undefined;
    }
    return envelope;
  }

  /** The deliveries of the message before this one that count as attempts (./itemAttempts.ts). */
  private async counted(jobId: string, message: ReceivedMessage): Promise<number> {
    const delivery = message.dequeueCount;
    if (delivery <= 1) return 0;
    return countedBefore(delivery, await this.deps.leaseLog.usedBefore({ jobId, messageId: message.messageId, delivery }));
  }

  /** Step 2: the items still owed a result, those past their attempts failed with why. */
  private async owed({ processor, message, counted }: Received, envelope: Envelope): Promise<readonly EnvelopeItem[]> {
    const dq = message.dequeueCount;
    const owed =
      dq > 1 || envelope.round > 0 ? await owedItems(this.deps.results, envelope.jobId, envelope.round, envelope.items) : envelope.items;
    const rules = rulesOf(processor);
    const spent = owed.filter((e) => isSpent(rules, e.attempt + counted));
    if (spent.length === 0) return owed;
    const reason = gaveUp('No result came back for it (its lease ran out, or a completion left it out)', processor.maxAttempts);
    const failed = spent.map((e) => ({ id: e.id, attempts: processor.maxAttempts, claimCheck: isClaimCheck(e) }));
    await this.deps.completion.failItems(envelope, failed, 'noResult', reason);
    return owed.filter((e) => !isSpent(rules, e.attempt + counted));
  }

  /**
   * Step 3: the message held for the lease, cut to `maxItems` items when it carries more (the rest
   * goes on as a message of its own, at the attempt it is at, visible at once). Undefined when the
   * message was lost meanwhile.
   */
  private async hold(
    { processor, queue, message, signer, counted }: Received,
    envelope: Envelope,
    items: readonly EnvelopeItem[],
    maxItems: number,
  ): Promise<{ popReceipt: string; leasedAt: number; leased: readonly EnvelopeItem[] } | undefined> {
    if (items.length <= maxItems) return { popReceipt: message.popReceipt, leasedAt: message.receivedAt, leased: items };
    const { queues, processorQueues, clock } = this.deps;
    const dq = message.dequeueCount;
    const leased = items.slice(0, maxItems);
    const rest = items.slice(maxItems).map((e) => ({ ...e, attempt: e.attempt + counted }));
    await queues.send(queue, { ...envelope, envelopeId: splitId(envelope.envelopeId, dq), items: rest }, 0);
    this.deps.wake(queue);
    const leasedAt = clock.now();
    try {
      const text = envelopeMessage({ ...envelope, items: leased }, signer);
      const popReceipt = await processorQueues.update(queue, message.messageId, message.popReceipt, leaseSeconds(processor), text);
      return { popReceipt, leasedAt, leased };
    } catch (err) {
      if (err instanceof ReceiptLost) return undefined;
      throw err;
    }
  }

  /** Step 4: the lease on what is held, with its items' data (claim checks redeemed). */
  private async leaseOf(
    { processor, queue, message, signer, counted }: Received,
    envelope: Envelope,
    held: { popReceipt: string; leasedAt: number; leased: readonly EnvelopeItem[] },
  ): Promise<Granted> {
    const { files, settings, clock, logger } = this.deps;
    const dq = message.dequeueCount;
    // This delivery is the attempt after those counted; it counts itself once a worker uses the lease.
    const attemptOf = (e: EnvelopeItem): number => e.attempt + counted;
    const { leased } = held;
    const datas = await mapLimited(leased, settings.itemConcurrency, async (e) =>
      isClaimCheck(e) ? (JSON.parse(await files.redeem(e.claimCheck)) as JsonObject) : e.data,
    );
    const lease: Lease = {
      processor: processor.name,
      queue,
      messageId: message.messageId,
      popReceipt: held.popReceipt,
      // The queue's own clock started the visibility after this instance sent the request, so this end is never later than its.
      expiresAt: held.leasedAt + leaseSeconds(processor) * 1000,
      jobId: envelope.jobId,
      round: envelope.round,
      envelope: envelope.envelopeId,
      jobItems: envelope.jobItems,
      tags: leaseTags(
        signer,
        envelope.jobId,
        leased.map((e) => ({ id: e.id, attempt: attemptOf(e), claimCheck: isClaimCheck(e) })),
      ),
      delivery: dq,
      used: false,
    };
    const trace = envelope.trace === undefined ? {} : { traceparent: envelope.trace };
    const items = leased.map((e, i) => ({
      id: e.id,
      jobId: envelope.jobId,
      attempt: attemptOf(e),
      data: datas[i] as JsonObject,
      ...trace,
    }));
    logger.log('debug', 'jobs.leased', {
      processor: processor.name,
      job: envelope.jobId,
      envelope: envelope.envelopeId,
      items: items.length,
      dequeueCount: dq,
    });
    return {
      leaseId: sealLease(lease, signer),
      lease,
      grantedAt: clock.now(),
      items,
      entries: leased,
      envelope,
      dequeueCount: dq,
      counted,
    };
  }
}
