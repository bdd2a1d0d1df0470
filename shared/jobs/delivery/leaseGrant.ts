/**
 * Turning a received message of a declared processor's queue into a lease — the one place leases are
 * handed out, for workers (./leases.ts) and the pusher alike. In order:
 *
 * 1. the message must be an envelope this app sealed, for this processor, of a job that still runs
 *    (otherwise it is dealt with: ./leaseIntake.ts);
 * 2. only the message its batch's carrier row names goes on (./carriage.ts: a copy is deleted, a
 *    retired carrier hands its parts on again);
 * 3. items already final (an earlier completion) are left out; an item's attempt is the envelope's
 *    plus the deliveries before this one that a worker received (used the lease of: ../ledger/leaseLog.ts),
 *    so a lease a worker let run out, or an item a completion did not mention, counts as an attempt
 *    when it comes back, and past the processor's maxAttempts it fails — but a batch handed to a long
 *    poll whose caller had gone does not (./itemAttempts.ts, `countedBefore`);
 * 4. a message of the processor's queue is moved to its retry lane (below), once an update has shown
 *    it is still held (a grant slower than the receive's visibility finds it received again by another
 *    request, which moves it; this one leases nothing); more items than asked for: the rest goes on as
 *    a batch of its own (a lane message is split);
 * 5. the lease: the message's id and pop receipt, its end, and a MAC tag per item (./leaseTerms.ts,
 *    ./leaseId.ts) — handed out only if the job row, read again last, still says the job is not cancelled.
 *
 * The retry lane (`<prefix>-r-<name>`, read first by every lease request: ./leaseHub.ts). A batch
 * leased from the processor's queue is put into the lane, held for the lease by the pop receipt the
 * put returns, with its items' attempts as they are; then the queue's message is deleted. So a
 * retry (the message made visible after its back-off) and a lease that ran out come back in the
 * lane, on time, never behind the queue's backlog (a storage queue hands messages out in the order
 * they became visible). A lane message's first delivery is the lease it was put for, so its
 * delivery is its dequeue count + 1 (a lane message sent, not put — a split's rest, a batch the
 * pusher put back, a part sent again — starts at delivery 2, its delivery 1 unused: it only spends
 * one of the unused deliveries `countedBefore` forgives). The lane message is bound as the batch's
 * carrier before the queue's message is deleted, so a crash between them leaves a copy that is
 * deleted when it is delivered again, never leased (./carriage.ts).
 */
import type { Signer } from '../../signing/signer';
import { type Envelope, type EnvelopeItem, isClaimCheck } from '../envelopes/envelope';
import { envelopeMessage } from '../envelopes/queues';
import type { CarrierRow } from '../ledger/carrierRows';
import { isFinished } from '../ledger/jobRecord';
import { type DeclaredProcessor, processorLaneName, processorQueueName } from '../processors/processorDefinition';
import { countedBefore, gaveUp, isSpent, owedItems } from './itemAttempts';
import type { ReceivedMessage } from './leaseHub';
import { leasableEnvelope } from './leaseIntake';
import { type GrantDeps, type Granted, type Held, leaseOf, leaseSeconds, type Received, rulesOf } from './leaseTerms';
import { Carriage, type Places, withAttempts } from './carriage';
import { unlessLost } from './processorQueues';
import { carriedIdOf, keyedId, newCarrierKey, partId } from './carrierIds';

export class LeaseGranter {
  private readonly carriage: Carriage;

  constructor(private readonly deps: GrantDeps) {
    this.carriage = new Carriage(deps);
  }

  queueOf(processor: DeclaredProcessor): string {
    return processorQueueName(this.deps.settings.queuePrefix, processor.name);
  }

  laneOf(processor: DeclaredProcessor): string {
    return processorLaneName(this.deps.settings.queuePrefix, processor.name);
  }

  /** Deletes a message this instance holds; one whose receipt moved on is someone else's now. */
  async drop(queue: string, message: { readonly messageId: string; readonly popReceipt: string }): Promise<void> {
    await this.carriage.drop(queue, message);
  }

  /** Puts a leased batch back, visible after `delaySeconds`, without counting the attempt (./carriage.ts). */
  putBack(granted: Granted, delaySeconds: number): Promise<void> {
    return this.carriage.putBack(granted, delaySeconds);
  }

  /**
   * A lease on the received message, or undefined when nothing in it is to be leased (the message is
   * then dealt with: deleted, its items recorded, or left for later).
   */
  async grant(processor: DeclaredProcessor, message: ReceivedMessage, maxItems: number, signer: Signer): Promise<Granted | undefined> {
    const places = { queue: this.queueOf(processor), lane: this.laneOf(processor) };
    const inLane = message.queue === places.lane;
    const delivery = message.dequeueCount + (inLane ? 1 : 0);
    const opened = { processor, queue: message.queue, message, signer, delivery, counted: 0 };
    const intake = { ...this.deps, drop: this.drop.bind(this), cancelled: this.cancelled.bind(this) };
    const found = await leasableEnvelope(intake, opened);
    if (found === undefined) return undefined;
    let envelope = found;
    let received: Received = { ...opened, counted: await this.counted(envelope.jobId, message.messageId, delivery) };
    // Only the message that carries its batch goes on (./carriage.ts). A queue's message on its first
    // delivery is not looked at: its move's binding says whether it is a copy.
    let row: CarrierRow | undefined;
    if (inLane || delivery > 1) {
      const look = await this.carriage.look(received, envelope, places);
      if (!look.carried) return undefined;
      row = look.row;
    }
    const items = await this.owed(received, envelope);
    if (items.length === 0) {
      await this.drop(received.queue, message);
      await this.deps.completion.check(envelope.jobId, envelope.jobItems);
      return undefined;
    }
    const part = inLane
      ? await this.hold(received, envelope, items, maxItems, row)
      : await this.move(received, envelope, items, maxItems, places);
    if (part === undefined) return undefined;
    received = part.received;
    envelope = part.envelope;
    const granted = await leaseOf(this.deps, received, envelope, part.held);
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

  /** Step 3: the items still owed a result, those past their attempts failed with why. */
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
   * Step 4 for a lane message that carries its batch (`row`): held as received, or — with more items
   * than `maxItems` — split, the lease on a new lane message with the first `maxItems` (./carriage.ts).
   */
  private async hold(
    received: Received,
    envelope: Envelope,
    items: readonly EnvelopeItem[],
    maxItems: number,
    row: CarrierRow | undefined,
  ): Promise<Part | undefined> {
    const { message } = received;
    if (items.length <= maxItems)
      return { received, envelope, held: { popReceipt: message.popReceipt, leasedAt: message.receivedAt, leased: items } };
    if (row === undefined) return undefined;
    const part = await this.carriage.split(received, envelope, row, items, maxItems);
    if (part === undefined) return undefined;
    return { received: { ...received, message: part.message, delivery: 1, counted: 0 }, envelope: part.envelope, held: part.held };
  }

  /**
   * Step 4 for a message of the processor's queue: what is leased is put into the lane, held for the
   * lease, at the attempt it is at, and bound as its batch's carrier; the rest goes on in the queue;
   * the queue's message is deleted. The lease is then delivery 1 of the lane's message, with nothing
   * counted before it.
   */
  private async move(
    received: Received,
    envelope: Envelope,
    items: readonly EnvelopeItem[],
    maxItems: number,
    places: Places,
  ): Promise<Part | undefined> {
    const { processor, queue, message, signer, delivery, counted } = received;
    const { processorQueues } = this.deps;
    // Still ours, and for a whole lease from now, before anything is put: a grant slower than the
    // receive's visibility (a stalled machine) finds its message received again by another request,
    // which moves it; this one then leases nothing.
    const popReceipt = await unlessLost(processorQueues.update(queue, message.messageId, message.popReceipt, leaseSeconds(processor)));
    if (popReceipt === undefined) return undefined;
    const { batch } = carriedIdOf(envelope.envelopeId);
    const leased = withAttempts(items.slice(0, maxItems), counted);
    const rest = items.slice(maxItems);
    const moved = { ...envelope, envelopeId: keyedId(batch, newCarrierKey()), items: leased };
    const leasedAt = this.deps.clock.now();
    const text = envelopeMessage(moved, signer);
    const put = await processorQueues.put(places.lane, text, leaseSeconds(processor));
    const restOn = rest.length === 0 ? undefined : { id: partId(batch, `q${delivery}`), from: (rest[0] as EnvelopeItem).id };
    const held = { ...received, message: { ...message, popReceipt } };
    if (!(await this.carriage.bindMoved(held, envelope, put, restOn, places))) return undefined;
    if (restOn !== undefined) await this.carriage.sendRest(queue, envelope, restOn.id, rest, counted);
    // Lost even so (a second stall as long as a lease): its new holder finds the batch bound to the lane's message and deletes it.
    await this.drop(queue, { messageId: message.messageId, popReceipt });
    const lane: ReceivedMessage = { ...put, dequeueCount: 0, text, receivedAt: leasedAt, queue: places.lane };
    return {
      received: { ...received, queue: places.lane, message: lane, delivery: 1, counted: 0 },
      envelope: moved,
      held: { popReceipt: put.popReceipt, leasedAt, leased },
    };
  }
}

/** What a lease is made on: the message held for it, its envelope, and the items held. */
interface Part {
  readonly received: Received;
  readonly envelope: Envelope;
  readonly held: Held;
}
