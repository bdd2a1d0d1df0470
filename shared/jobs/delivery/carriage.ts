/**
 * One carrier per batch: of the messages that may carry a batch of a declared processor's items,
 * only the one its carrier row names (../ledger/carrierRows.ts) is ever leased.
 *
 * Why: a batch can come to travel in two messages. A move into the retry lane (./leaseGrant.ts) puts
 * the batch's lane message and then deletes the queue's; a delete that fails, an instance killed in
 * between, a put the storage client sent again after a timed-out attempt had landed, an enqueue
 * resumed after a kill that sends an envelope again — each leaves a second message with the same
 * items, and both were leased, to two workers at once (found by the scale-out runs, docs/scale-out.md).
 *
 * The rules, each kept by a write that comes before what depends on it:
 * - A move puts the lane message, then binds the batch to it (insert-if-absent), then deletes the
 *   queue's message: a move that loses the binding (another message was bound first) deletes its lane
 *   message and leases nothing; one that wins leases even if its delete fails (the queue's message,
 *   delivered again, finds the batch bound elsewhere and is deleted).
 * - A lane message is leased only when the row names it. One sent with a key (./carrierIds.ts) whose
 *   row is awaiting that key binds it on its first delivery; one whose batch has no row yet is a move's
 *   lane message whose binding has not landed (or never will: then the queue's message is moved again
 *   and binds another), so it is left hidden for another lease time, never leased or deleted on a guess.
 *   A lane message of an earlier version (no key) binds the batch if no row is there.
 * - A message of a batch bound to another message is a copy and is deleted (a copy of a move's queue
 *   message first sends the move's rest again: the rest's own binding keeps that once).
 * - Splitting a held batch (a lease that takes fewer items than the message has) and putting a batch
 *   back (the pusher after a 429) hand the items over: in one transaction the carrier's row records the
 *   parts and their rows await their messages; the parts are sent; the carrier is deleted. The carrier
 *   delivered again after an interruption sends the parts again — each part's row takes one of them.
 * So no item is lost at any step (a message is deleted only after whatever replaces it is on record),
 * and two messages with one batch are never both leased.
 */
import { type Clock } from '../../clock';
import type { Logger } from '../../log';
import type { Envelope, EnvelopeItem } from '../envelopes/envelope';
import { envelopeMessage, type EnvelopeQueues } from '../envelopes/queues';
import type { BatchPart, CarrierRow, CarrierRows, Handover } from '../ledger/carrierRows';
import { carriedIdOf, keyedId, newCarrierKey, partId } from './carrierIds';
import type { ReceivedMessage } from './leaseHub';
import type { Granted, Held, Received } from './leaseTerms';
import { leaseSeconds } from './leaseTerms';
import { type ProcessorQueues, unlessLost } from './processorQueues';

export interface CarriageDeps {
  readonly carriers: CarrierRows;
  readonly processorQueues: ProcessorQueues;
  readonly queues: EnvelopeQueues;
  readonly wake: (queue: string) => void;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** A declared processor's two queues. */
export interface Places {
  readonly queue: string;
  readonly lane: string;
}

/** What a look found: the message carries its batch (the row, for a lane message), or it was dealt with. */
export type Look = { readonly carried: true; readonly row?: CarrierRow } | { readonly carried: false };

/** A part of a held batch put into the lane for its lease: the message, its envelope, and what is held. */
export interface HeldPart {
  readonly message: ReceivedMessage;
  readonly envelope: Envelope;
  readonly held: Held;
}

/** How long a batch being put back is held while its part is sent and it is deleted. */
const putBackHoldSeconds = 60;

type Message = { readonly messageId: string; readonly popReceipt: string };

export class Carriage {
  constructor(private readonly deps: CarriageDeps) {}

  /** Whether the received message carries its batch; if not, it is dealt with here (see the module comment). */
  async look(at: Received, envelope: Envelope, places: Places): Promise<Look> {
    const { carriers } = this.deps;
    const { batch, key } = carriedIdOf(envelope.envelopeId);
    const row = await carriers.read(envelope.jobId, batch);
    if (at.queue !== places.lane) {
      if (row === undefined) return { carried: true };
      await this.asCopy(at, envelope, row, places);
      return { carried: false };
    }
    let current = row;
    if (current === undefined) {
      if (key !== undefined) return this.notYet(at, envelope);
      current = await carriers.bind(envelope.jobId, batch, at.message.messageId);
    } else if (current.messageId === undefined && current.key !== undefined && current.key === key) {
      const bound = await carriers.bindAwaiting(envelope.jobId, batch, current, at.message.messageId);
      // Changed meanwhile (a copy sent with the same key bound it): judged again when it comes back.
      if (bound === undefined) return this.notYet(at, envelope);
      current = bound;
    }
    if (current.messageId !== at.message.messageId) {
      await this.asCopy(at, envelope, current, places);
      return { carried: false };
    }
    if (current.handover !== undefined) {
      await this.handOn(at, envelope, current.handover, places);
      return { carried: false };
    }
    return { carried: true, row: current };
  }

  /**
   * A move's lane message (`put`) takes the batch of the queue's message it copies (`at`, held with
   * its current receipt); false when another message carries it (both are then dealt with).
   */
  async bindMoved(at: Received, envelope: Envelope, put: Message, rest: CarrierRow['rest'], places: Places): Promise<boolean> {
    const { batch } = carriedIdOf(envelope.envelopeId);
    const row = await this.deps.carriers.bind(envelope.jobId, batch, put.messageId, rest);
    if (row.messageId === put.messageId) return true;
    await this.drop(places.lane, put);
    await this.asCopy(at, envelope, row, places);
    return false;
  }

  /**
   * A held lane message with more items than the lease takes: the first `maxItems` go into a new lane
   * message held for the lease, the rest into one visible at once, and the carrier is deleted.
   * Undefined when the row or the message changed meanwhile (nothing is leased; it is judged again).
   */
  async split(
    at: Received,
    envelope: Envelope,
    row: CarrierRow,
    items: readonly EnvelopeItem[],
    maxItems: number,
  ): Promise<HeldPart | undefined> {
    const { carriers, processorQueues, clock } = this.deps;
    const { batch } = carriedIdOf(envelope.envelopeId);
    const [kept, rest] = [items.slice(0, maxItems), items.slice(maxItems)];
    const handover: Handover = {
      kept: { id: partId(batch, `k${at.delivery}`), key: newCarrierKey() },
      rest: { id: partId(batch, `r${at.delivery}`), key: newCarrierKey() },
      from: (rest[0] as EnvelopeItem).id,
    };
    if (!(await carriers.handOver(envelope.jobId, batch, row, handover))) return undefined;
    // Still held after the handover is on record: a request that received the message meanwhile (this
    // one stalled for a lease time) either leased it before (this update fails and no part is sent: the
    // message hands them on when it comes back) or finds it retired and hands the parts on itself.
    const receipt = await unlessLost(
      processorQueues.update(at.queue, at.message.messageId, at.message.popReceipt, leaseSeconds(at.processor)),
    );
    if (receipt === undefined) return undefined;
    await this.send(at.queue, partOf(envelope, handover.rest, rest, at.counted), 0);
    const part = partOf(envelope, handover.kept as BatchPart, kept, at.counted);
    const text = envelopeMessage(part, at.signer);
    const leasedAt = clock.now();
    const put = await processorQueues.put(at.queue, text, leaseSeconds(at.processor));
    const keptId = (handover.kept as BatchPart).id;
    const awaiting = await carriers.read(envelope.jobId, keptId);
    const bound = awaiting === undefined ? undefined : await carriers.bindAwaiting(envelope.jobId, keptId, awaiting, put.messageId);
    await this.drop(at.queue, { messageId: at.message.messageId, popReceipt: receipt });
    if (bound === undefined) {
      // A copy of the part bound it first (this grant stalled for a lease time): this one is the copy.
      await this.drop(at.queue, put);
      return undefined;
    }
    const message: ReceivedMessage = { ...put, dequeueCount: 0, text, receivedAt: leasedAt, queue: at.queue };
    return { message, envelope: part, held: { popReceipt: put.popReceipt, leasedAt, leased: part.items } };
  }

  /** Puts a leased batch back, visible after `delaySeconds`, its items at the attempts they are at (an endpoint's 429). */
  async putBack(granted: Granted, delaySeconds: number): Promise<void> {
    const { lease, envelope, entries, delivery, counted } = granted;
    const { batch } = carriedIdOf(envelope.envelopeId);
    const row = await this.deps.carriers.read(lease.jobId, batch);
    // Not its carrier now (it cannot be, once leased): left to come back and be judged.
    if (row?.messageId !== lease.messageId || row.handover !== undefined || entries.length === 0) return;
    const handover: Handover = { rest: { id: partId(batch, `p${delivery}`), key: newCarrierKey() }, from: (entries[0] as EnvelopeItem).id };
    if (!(await this.deps.carriers.handOver(lease.jobId, batch, row, handover))) return;
    // Still held after the handover is on record (as in `split`): otherwise the message hands the batch on when it comes back.
    const receipt = await unlessLost(this.deps.processorQueues.update(lease.queue, lease.messageId, lease.popReceipt, putBackHoldSeconds));
    if (receipt === undefined) return;
    await this.send(lease.queue, partOf(envelope, handover.rest, entries, counted), delaySeconds);
    await this.drop(lease.queue, { messageId: lease.messageId, popReceipt: receipt });
  }

  /** A move's rest: the items past what it leased go on in the processor's queue as batch `id`, visible at once. */
  async sendRest(queue: string, envelope: Envelope, id: string, items: readonly EnvelopeItem[], counted: number): Promise<void> {
    await this.send(queue, { ...envelope, envelopeId: id, items: withAttempts(items, counted) }, 0);
  }

  /** A retired carrier delivered again: its parts are sent again (each part's row takes one) and it is deleted. */
  private async handOn(at: Received, envelope: Envelope, handover: Handover, places: Places): Promise<void> {
    const from = envelope.items.findIndex((e) => e.id === handover.from);
    const cut = from < 0 ? 0 : from;
    const [before, after] = [envelope.items.slice(0, cut), envelope.items.slice(cut)];
    if (handover.kept !== undefined && before.length > 0)
      await this.send(places.lane, partOf(envelope, handover.kept, before, at.counted), 0);
    if (after.length > 0) await this.send(places.lane, partOf(envelope, handover.rest, after, at.counted), 0);
    this.deps.logger.log('warn', 'jobs.batch_handed_on_again', {
      job: envelope.jobId,
      envelope: envelope.envelopeId,
      delivery: at.delivery,
    });
    await this.drop(at.queue, at.message);
  }

  /** A message of a batch another message carries: deleted (a move's queue message sends the move's rest again first). */
  private async asCopy(at: Received, envelope: Envelope, row: CarrierRow, places: Places): Promise<void> {
    const { rest } = row;
    const from = rest === undefined ? -1 : envelope.items.findIndex((e) => e.id === rest.from);
    if (at.queue === places.queue && rest !== undefined && from >= 0)
      await this.sendRest(places.queue, envelope, rest.id, envelope.items.slice(from), at.counted);
    this.deps.logger.log('warn', 'jobs.batch_copy_dropped', {
      job: envelope.jobId,
      envelope: envelope.envelopeId,
      queue: at.queue,
      delivery: at.delivery,
    });
    await this.drop(at.queue, at.message);
  }

  /** A lane message whose batch is not bound yet: hidden for another lease time, then judged again. */
  private async notYet(at: Received, envelope: Envelope): Promise<Look> {
    this.deps.logger.log('warn', 'jobs.batch_not_bound_yet', { job: envelope.jobId, envelope: envelope.envelopeId, delivery: at.delivery });
    await unlessLost(this.deps.processorQueues.update(at.queue, at.message.messageId, at.message.popReceipt, leaseSeconds(at.processor)));
    return { carried: false };
  }

  private async send(queue: string, envelope: Envelope, delaySeconds: number): Promise<void> {
    await this.deps.queues.send(queue, envelope, delaySeconds);
    if (delaySeconds === 0) this.deps.wake(queue);
  }

  /** Deletes a message this instance holds; one whose receipt moved on is someone else's now. */
  async drop(queue: string, message: Message): Promise<void> {
    await unlessLost(this.deps.processorQueues.delete(queue, message.messageId, message.popReceipt));
  }
}

/** A part of `envelope`: `items` at the attempts they are at (plus the deliveries counted), sent with the part's key. */
function partOf(envelope: Envelope, part: BatchPart, items: readonly EnvelopeItem[], counted: number): Envelope {
  return { ...envelope, envelopeId: keyedId(part.id, part.key), items: withAttempts(items, counted) };
}

/** Items moved to a new message take the attempt they are at: their envelope's plus the deliveries counted. */
export function withAttempts(items: readonly EnvelopeItem[], counted: number): EnvelopeItem[] {
  return items.map((e) => ({ ...e, attempt: e.attempt + counted }));
}
