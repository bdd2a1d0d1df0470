/**
 * Service Bus scheduled mode: the message itself waits in the broker until its time
 * (`ServiceBusSender.scheduleMessages`), with no orchestration. The broker's sequence number is the
 * cancel handle. It is a signed 64-bit integer (a `Long`): it is kept as a decimal string, never as
 * a JavaScript number (which would round it), and turned back into a `Long` to cancel.
 *
 * The message id is the schedule id, so with duplicate detection on the entity a create retried
 * after a crash (between scheduling and storing the handle) does not deliver twice.
 */
import type { ServiceBusMessage, ServiceBusSender } from '@azure/service-bus';
import Long from 'long';

import type { JsonValue } from '../effects/effect';

/** The part of a `ServiceBusSender` schedules use (a fake in tests implements just this). */
export type ScheduleSender = Pick<ServiceBusSender, 'sendMessages' | 'scheduleMessages' | 'cancelScheduledMessages'>;

export interface ScheduledDelivery {
  /** Schedules the message; answers its sequence number as a decimal string. */
  schedule(entity: string, message: ServiceBusMessage, at: Date): Promise<string>;
  /** Cancels it; `gone` when the broker no longer holds it (already enqueued, or cancelled). */
  cancel(entity: string, sequenceNumber: string): Promise<'cancelled' | 'gone'>;
}

class ServiceBusUnavailable extends Error {
  override readonly name = 'ServiceBusUnavailable';
}

export function scheduledMessage(scheduleId: string, body: JsonValue, at: string, sessionId: string | undefined): ServiceBusMessage {
  return {
    body,
    contentType: 'application/json',
    messageId: scheduleId,
    ...(sessionId === undefined ? {} : { sessionId }),
    applicationProperties: { scheduleId, scheduledFor: at },
  };
}

/** Parses a stored sequence number back into a Long (exactly). */
export function sequenceNumberOf(text: string): Long {
  if (!/^-?\d{1,19}$/.test(text)) throw new Error(`"${text}" is not a sequence number`);
  const value = Long.fromString(text);
  if (value.toString() !== text.replace(/^(-?)0+(?=\d)/, '$1')) throw new Error(`"${text}" does not fit in 64 bits`);
  return value;
}

function isMessageNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && err.code === 'MessageNotFound';
}

export function senderDelivery(senderFor: (entity: string) => ScheduleSender | undefined): ScheduledDelivery {
  const sender = (entity: string): ScheduleSender => {
    const found = senderFor(entity);
    if (found === undefined) throw new ServiceBusUnavailable('Service Bus is not configured (ServiceBusConnection)');
    return found;
  };
  return {
    async schedule(entity, message, at) {
      const [sequenceNumber] = await sender(entity).scheduleMessages(message, at);
      if (sequenceNumber === undefined) throw new Error('Service Bus returned no sequence number');
      return sequenceNumber.toString();
    },
    async cancel(entity, sequenceNumber) {
      try {
        await sender(entity).cancelScheduledMessages(sequenceNumberOf(sequenceNumber));
        return 'cancelled';
      } catch (err) {
        if (isMessageNotFound(err)) return 'gone';
        throw err;
      }
    },
  };
}
