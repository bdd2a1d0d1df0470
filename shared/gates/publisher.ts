/**
 * Gate releases and resets on the `gate-events` Service Bus topic, for workers outside the app. The
 * message id is the gate, generation and kind, so with duplicate detection on the topic an activity
 * retry is delivered once; without it a subscriber must treat a repeat as harmless (it is: the same
 * release of the same generation). Subscribers filter on the `gate` application property.
 */
import type { ServiceBusMessage } from '@azure/service-bus';

import type { Logger } from '../log';
import type { AnnounceInput, AnnounceResult } from './messages';

/** What the publisher needs of a ServiceBusSender (tests pass a fake). */
export interface GateEventSender {
  sendMessages(message: ServiceBusMessage): Promise<void>;
}

const gateEventSubjects = { create: 'GateCreated', release: 'GateReleased', reset: 'GateReset' } as const;

export function gateEventMessage(input: AnnounceInput): ServiceBusMessage {
  const { gate } = input;
  return {
    messageId: `${gate.name}:${gate.generation}:${input.kind}`,
    subject: gateEventSubjects[input.kind],
    contentType: 'application/json',
    body: {
      type: gateEventSubjects[input.kind],
      gate: gate.name,
      generation: gate.generation,
      state: gate.state,
      releaseAt: gate.releaseAt,
      release: gate.release,
      by: input.by,
      how: input.how,
    },
    applicationProperties: { gate: gate.name, generation: gate.generation, type: gateEventSubjects[input.kind] },
  };
}

export class GateEventPublisher {
  constructor(
    /** Undefined when no Service Bus is configured. */
    private readonly sender: () => GateEventSender | undefined,
    private readonly logger: Logger,
  ) {}

  /** Whether a Service Bus is configured (without one, nothing is published and nothing need follow a change for it). */
  configured(): boolean {
    return this.sender() !== undefined;
  }

  /**
   * Publishes; a failure is logged and reported rather than thrown, so a Service Bus outage cannot
   * hold up the release for the runs and clients that were pushed it through Durable.
   */
  async publish(input: AnnounceInput): Promise<AnnounceResult['published']> {
    const sender = this.sender();
    if (sender === undefined) return 'notConfigured';
    try {
      await sender.sendMessages(gateEventMessage(input));
      return 'published';
    } catch (err) {
      this.logger.log('error', 'gates.publish.failed', {
        gate: input.gate.name,
        generation: input.gate.generation,
        kind: input.kind,
        error: err,
      });
      return 'failed';
    }
  }
}
