/**
 * Turning a received message of a declared processor's queue into a lease — the one place leases are
 * handed out, for workers (./leases.ts) and the pusher alike. In order:
 *
 * 1. the message must be an envelope this app sealed, for this processor, of a job that still runs
 *    (otherwise it is dealt with: ./leaseIntake.ts);
 * 2. items already final (an earlier completion) are left out; an item's attempt is the envelope's
 *    plus the deliveries before this one that a worker received (used the lease of: ../ledger/leaseLog.ts),
 *    so a lease a worker let run out, or an item a completion did not mention, counts as an attempt
 *    when it comes back, and past the processor's maxAttempts it fails — but a batch handed to a long
 *    poll whose caller had gone does not (./itemAttempts.ts, `countedBefore`);
 * 3. more items than asked for: the rest goes on as a message of its own, and this one is cut to what
 *    is leased; a message of the processor's queue is moved to its retry lane (below);
 * 4. the lease: the message's id and pop receipt, its end, and a MAC tag per item (./leaseId.ts) —
 *    handed out only if the job row, read again last, still says the job is not cancelled.
 *
 * The retry lane (`<prefix>-r-<name>`, read first by every lease request: ./leaseHub.ts). A batch
 * leased from the processor's queue is put into the lane, held for the lease by the pop receipt the
 * put returns, with its items' attempts as they are; then the queue's message is deleted. So a
 * retry (the message made visible after its back-off) and a lease that ran out come back in the
 * lane, on time, never behind the queue's backlog (a storage queue hands messages out in the order
 * they became visible). A lane message's first delivery is the lease it was put for, so its
 * delivery is its dequeue count + 1 (a lane message sent, not put — a split's rest, a batch the
 * pusher put back — starts at delivery 2, its delivery 1 unused: it only spends one of the
 * unused deliveries `countedBefore` forgives). A crash between the put and the delete leaves both:
 * the items travel twice, and each is still recorded once (results are insert-if-absent).
 */
import type { Clock } from '../../clock';
import type { Logger } from '../../log';
import { mapLimited } from '../../mapLimited';
import type { Signer } from '../../signing/signer';
import { type Envelope, type EnvelopeItem, isClaimCheck, type JsonObject } from '../envelopes/envelope';
import type { JobFiles } from '../envelopes/files';
import { envelopeMessage, type EnvelopeQueues } from '../envelopes/queues';
import type { Completion } from '../ledger/completion';
import { isFinished } from '../ledger/jobRecord';
import type { JobRows } from '../ledger/jobRows';
import type { LeaseLog } from '../ledger/leaseLog';
import type { ResultStore } from '../ledger/resultStore';
import { type DeclaredProcessor, processorLaneName, processorQueueName, pushLeaseMarginSeconds } from '../processors/processorDefinition';
import { type AttemptRules, countedBefore, gaveUp, isSpent, owedItems } from './itemAttempts';
import type { ReceivedMessage } from './leaseHub';
import { type Lease, leaseTags, sealLease } from './leaseId';
import { leasableEnvelope } from './leaseIntake';
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
  /** The delivery this lease is of its message (the pusher names a batch it puts back after it). */
  readonly delivery: number;
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
  /** Which delivery of the message this is (1 for the first): its dequeue count, + 1 in the lane. */
  readonly delivery: number;
  /** Deliveries of the message before this one that count as attempts. */
  readonly counted: number;
}

/** A message held for a lease: its receipt, when the lease began, and the items it leases. */
interface Held {
  readonly popReceipt: string;
  readonly leasedAt: number;
  readonly leased: readonly EnvelopeItem[];
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

  laneOf(processor: DeclaredProcessor): string {
    return processorLaneName(this.deps.settings.queuePrefix, processor.name);
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
    const inLane = message.queue === this.laneOf(processor);
    const delivery = message.dequeueCount + (inLane ? 1 : 0);
    const opened = { processor, queue: message.queue, message, signer, delivery, counted: 0 };
    const intake = { ...this.deps, drop: this.drop.bind(this), cancelled: this.cancelled.bind(this) };
    const envelope = await leasableEnvelope(intake, opened);
    if (envelope === undefined) return undefined;
    let received: Received = { ...opened, counted: await this.counted(envelope.jobId, message.messageId, delivery) };
    const items = await this.owed(received, envelope);
    if (items.length === 0) {
      await this.drop(received.queue, message);
      await this.deps.completion.check(envelope.jobId, envelope.jobItems);
      return undefined;
    }
    let held: Held | undefined;
    if (inLane) held = await this.hold(received, envelope, items, maxItems);
    else ({ received, held } = await this.move(received, envelope, items, maxItems));
    if (held === undefined) return undefined;
    const granted = await this.leaseOf(received, envelope, held);
    // Read again last: a cancel answered while this batch was prepared leaves no lease of the job after it.
    if (await this.cancelled(envelope.jobId)) {
      await this.drop(received.queue, { messageId: received.message.messageId, popReceipt: granted.lease.popReceipt });
      return undefined;
    }
    return granted;
  }

  /** The job is gone, being cancelled or finished (expired, say): nothing of it is to be leased. */
  private async cancelled(jobId: string): Promise<boolean> {
    const stored = await this.deps.rows.read(jobId);
    return stored === undefined || stored.job.cancelledAt !== null || isFinished(stored.job.phase);
  }

  /** The deliveries of the message before this one that count as attempts (./itemAttempts.ts). */
  private async counted(jobId: string, messageId: string, delivery: number): Promise<number> {
    if (delivery <= 1) return 0;
    return countedBefore(delivery, await this.deps.leaseLog.usedBefore({ jobId, messageId, delivery }));
  }

  /** Step 2: the items still owed a result, those past their attempts failed with why. */
  private async owed({ processor, delivery, counted }: Received, envelope: Envelope): Promise<readonly EnvelopeItem[]> {
    const owed =
      delivery > 1 || envelope.round > 0
        ? await owedItems(this.deps.results, envelope.jobId, envelope.round, envelope.items)
        : envelope.items;
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
    { processor, queue, message, signer, delivery, counted }: Received,
    envelope: Envelope,
    items: readonly EnvelopeItem[],
    maxItems: number,
  ): Promise<Held | undefined> {
    if (items.length <= maxItems) return { popReceipt: message.popReceipt, leasedAt: message.receivedAt, leased: items };
    const { processorQueues, clock } = this.deps;
    const leased = items.slice(0, maxItems);
    await this.sendRest(queue, envelope, items.slice(maxItems), counted, delivery);
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

  /** The items past `maxItems` go on in a message of their own, at the attempt they are at, visible at once. */
  private async sendRest(
    queue: string,
    envelope: Envelope,
    rest: readonly EnvelopeItem[],
    counted: number,
    delivery: number,
  ): Promise<void> {
    if (rest.length === 0) return;
    const items = rest.map((e) => ({ ...e, attempt: e.attempt + counted }));
    await this.deps.queues.send(queue, { ...envelope, envelopeId: splitId(envelope.envelopeId, delivery), items }, 0);
    this.deps.wake(queue);
  }

  /**
   * Step 3 for a message of the processor's queue: what is leased is put into the lane, held for the
   * lease, at the attempt it is at (the rest goes on in the queue), and the queue's message is
   * deleted. The lease is then delivery 1 of the lane's message, with nothing counted before it.
   */
  private async move(
    received: Received,
    envelope: Envelope,
    items: readonly EnvelopeItem[],
    maxItems: number,
  ): Promise<{ received: Received; held: Held }> {
    const { processor, queue, message, signer, delivery, counted } = received;
    const lane = this.laneOf(processor);
    const leased = items.slice(0, maxItems).map((e) => ({ ...e, attempt: e.attempt + counted }));
    const leasedAt = this.deps.clock.now();
    const text = envelopeMessage({ ...envelope, items: leased }, signer);
    const put = await this.deps.processorQueues.put(lane, text, leaseSeconds(processor));
    await this.sendRest(queue, envelope, items.slice(maxItems), counted, delivery);
    await this.drop(queue, message);
    const moved: ReceivedMessage = { ...put, dequeueCount: 0, text, receivedAt: leasedAt, queue: lane };
    return {
      received: { ...received, queue: lane, message: moved, delivery: 1, counted: 0 },
      held: { popReceipt: put.popReceipt, leasedAt, leased },
    };
  }

  /** Step 4: the lease on what is held, with its items' data (claim checks redeemed). */
  private async leaseOf(
    { processor, queue, message, signer, delivery, counted }: Received,
    envelope: Envelope,
    held: Held,
  ): Promise<Granted> {
    const { files, settings, clock, logger } = this.deps;
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
      delivery,
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
      delivery,
    });
    return {
      leaseId: sealLease(lease, signer),
      lease,
      grantedAt: clock.now(),
      items,
      entries: leased,
      envelope,
      delivery,
      counted,
    };
  }
}
