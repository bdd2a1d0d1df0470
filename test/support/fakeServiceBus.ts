/**
 * A fake Service Bus namespace (the one fake this project allows): senders that send and schedule
 * messages, a broker clock that enqueues scheduled messages when their time comes, and session
 * receivers that hand out a session's messages in enqueue order. Sequence numbers start just below
 * 2^53, so any code that turns them into JavaScript numbers gets them wrong.
 */
import type { ServiceBusMessage } from '@azure/service-bus';
import Long from 'long';

import type { ScheduleSender } from '../../shared/schedules/scheduledDelivery';

export interface BrokeredMessage {
  readonly entity: string;
  readonly sequenceNumber: string;
  readonly message: ServiceBusMessage;
  readonly scheduledFor: number | undefined;
}

export class FakeServiceBus {
  private next = Long.fromString('9007199254740990');
  /** Scheduled and not yet enqueued, by sequence number. */
  readonly scheduled = new Map<string, BrokeredMessage>();
  /** Enqueued, per entity, in enqueue order. */
  private readonly queues = new Map<string, BrokeredMessage[]>();
  readonly cancelled: string[] = [];
  /** Set to make the next schedule or send fail like an unreachable namespace. */
  failNext: Error | undefined;

  constructor(private readonly now: () => number) {}

  private take(entity: string, message: ServiceBusMessage, scheduledFor: number | undefined): BrokeredMessage {
    const brokered = { entity, sequenceNumber: this.next.toString(), message, scheduledFor };
    this.next = this.next.add(1);
    return brokered;
  }

  private enqueue(brokered: BrokeredMessage): void {
    const list = this.queues.get(brokered.entity) ?? [];
    list.push(brokered);
    this.queues.set(brokered.entity, list);
  }

  private fail(): void {
    const err = this.failNext;
    this.failNext = undefined;
    if (err !== undefined) throw err;
  }

  sender(entity: string): ScheduleSender {
    return {
      sendMessages: (messages) => {
        this.fail();
        for (const m of Array.isArray(messages) ? messages : [messages]) this.enqueue(this.take(entity, m as ServiceBusMessage, undefined));
        return Promise.resolve();
      },
      scheduleMessages: (messages, at) =>
        Promise.resolve().then(() => {
          this.fail();
          const list = Array.isArray(messages) ? messages : [messages];
          const numbers = list.map((m) => {
            const brokered = this.take(entity, m, at.getTime());
            this.scheduled.set(brokered.sequenceNumber, brokered);
            return Long.fromString(brokered.sequenceNumber);
          });
          this.tick();
          return numbers;
        }),
      cancelScheduledMessages: (sequenceNumbers) => {
        for (const n of Array.isArray(sequenceNumbers) ? sequenceNumbers : [sequenceNumbers]) {
          const key = n.toString();
          if (!this.scheduled.delete(key)) {
            return Promise.reject(Object.assign(new Error(`The scheduled message ${key} was not found`), { code: 'MessageNotFound' }));
          }
          this.cancelled.push(key);
        }
        return Promise.resolve();
      },
    };
  }

  /** Enqueues every scheduled message whose time has come, earliest first (then by sequence number). */
  tick(): void {
    const due = [...this.scheduled.values()]
      .filter((m) => (m.scheduledFor ?? 0) <= this.now())
      .sort(
        (a, b) =>
          (a.scheduledFor ?? 0) - (b.scheduledFor ?? 0) || Long.fromString(a.sequenceNumber).compare(Long.fromString(b.sequenceNumber)),
      );
    for (const m of due) {
      this.scheduled.delete(m.sequenceNumber);
      this.enqueue(m);
    }
  }

  /** Enqueues one scheduled message now, as a broker whose clock is ahead would. */
  enqueueNow(sequenceNumber: string): void {
    const m = this.scheduled.get(sequenceNumber);
    if (m === undefined) throw new Error(`No scheduled message ${sequenceNumber}`);
    this.scheduled.delete(sequenceNumber);
    this.enqueue(m);
  }

  /** A session receiver's view: the session's enqueued messages, oldest first, received and completed. */
  receiveSession(entity: string, sessionId: string): BrokeredMessage[] {
    const list = this.queues.get(entity) ?? [];
    const mine = list.filter((m) => m.message.sessionId === sessionId);
    this.queues.set(
      entity,
      list.filter((m) => m.message.sessionId !== sessionId),
    );
    return mine;
  }

  /** Every enqueued message of an entity, received and completed. */
  receiveAll(entity: string): BrokeredMessage[] {
    const list = this.queues.get(entity) ?? [];
    this.queues.set(entity, []);
    return list;
  }
}
