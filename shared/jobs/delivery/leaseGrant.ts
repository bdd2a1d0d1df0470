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
 *    is leased; a message of the processor's queue is moved to its retry lane (below), once an update
 *    has shown it is still held (a grant slower than the receive's visibility finds it received again
 *    by another request, which leases it; this one leases nothing);
 * 4. the lease: the message's id and pop receipt, its end, and a MAC tag per item (./leaseTerms.ts,
 *    ./leaseId.ts) — handed out only if the job row, read again last, still says the job is not cancelled.
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
import type { Signer } from '../../signing/signer';
import { type Envelope, type EnvelopeItem, isClaimCheck } from '../envelopes/envelope';
import { envelopeMessage } from '../envelopes/queues';
import { isFinished } from '../ledger/jobRecord';
import { type DeclaredProcessor, processorLaneName, processorQueueName } from '../processors/processorDefinition';
import { countedBefore, gaveUp, isSpent, owedItems } from './itemAttempts';
import type { ReceivedMessage } from './leaseHub';
import { leasableEnvelope } from './leaseIntake';
import { type GrantDeps, type Granted, type Held, leaseOf, leaseSeconds, type Received, rulesOf, splitId } from './leaseTerms';
import { ReceiptLost } from './processorQueues';

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
    await unlessLost(this.deps.processorQueues.delete(queue, message.messageId, message.popReceipt));
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
    const granted = await leaseOf(this.deps, received, envelope, held);
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
  ): Promise<{ received: Received; held: Held | undefined }> {
    const { processor, queue, message, signer, delivery, counted } = received;
    const { processorQueues } = this.deps;
    const lane = this.laneOf(processor);
    // Still ours, and for a whole lease from now, before anything is put: a grant slower than the
    // receive's visibility (a stalled machine) finds its message received again by another request,
    // which leases it; this one then leases nothing. (The lane message below is a fresh hold: without
    // this, both would hold the batch at once: the likely cause of the two holders in run 5 of the
    // 10-minute soaks of 2026-11-29, docs/scale-out.md.)
    const popReceipt = await unlessLost(processorQueues.update(queue, message.messageId, message.popReceipt, leaseSeconds(processor)));
    if (popReceipt === undefined) return { received, held: undefined };
    const leased = items.slice(0, maxItems).map((e) => ({ ...e, attempt: e.attempt + counted }));
    const leasedAt = this.deps.clock.now();
    const text = envelopeMessage({ ...envelope, items: leased }, signer);
    const put = await processorQueues.put(lane, text, leaseSeconds(processor));
    await this.sendRest(queue, envelope, items.slice(maxItems), counted, delivery);
    const dropped = await unlessLost(processorQueues.delete(queue, message.messageId, popReceipt).then(() => true));
    if (dropped === undefined) {
      // Lost even so (a second stall as long as a lease): its new holder has these items, so the
      // lane's copy goes and nothing is leased. A rest sent above travels twice; each item is still
      // recorded once.
      await this.drop(lane, put);
      return { received, held: undefined };
    }
    const moved: ReceivedMessage = { ...put, dequeueCount: 0, text, receivedAt: leasedAt, queue: lane };
    return {
      received: { ...received, queue: lane, message: moved, delivery: 1, counted: 0 },
      held: { popReceipt: put.popReceipt, leasedAt, leased },
    };
  }
}

/** What `work` gives, or undefined when the message is no longer held (ReceiptLost). */
async function unlessLost<T>(work: Promise<T>): Promise<T | undefined> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof ReceiptLost) return undefined;
    throw err;
  }
}
