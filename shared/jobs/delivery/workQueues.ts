/**
 * The work queues' triggers: an envelope (./inApp.ts) and a poisoned one (./poison.ts). At this
 * boundary a failure is judged by what it is (shared/errors.ts `endsMessage`): one the message itself
 * causes — a message that is not an envelope of this app — ends it now, with why logged and counted
 * among the poisoned envelopes, instead of being delivered again until the poison queue takes it; any
 * other failure is thrown, and the host delivers the message again.
 */
import { endsMessage } from '../../errors';
import type { Logger } from '../../log';
import type { JobInstruments } from '../metrics';
import type { Delivery, EnvelopeReport, InAppEngine } from './inApp';
import type { PoisonHandler, PoisonReport } from './poison';

/** A message ended without being processed, and why. */
export interface Refused {
  readonly refused: string;
}

export interface WorkQueuesDeps {
  readonly inApp: InAppEngine;
  readonly poison: PoisonHandler;
  readonly logger: Logger;
  /** The capability's metrics and spans. */
  readonly instruments: JobInstruments;
}

export class WorkQueues {
  constructor(private readonly deps: WorkQueuesDeps) {}

  /** Processes an envelope; throws what failed it (the use-case under `onMessage`). */
  process(text: string, delivery: Delivery): Promise<EnvelopeReport> {
    return this.deps.inApp.process(text, delivery);
  }

  /** A work queue's message: processed, or refused (and so done with); throws for the host to deliver it again. */
  async onMessage(text: string, delivery: Delivery): Promise<EnvelopeReport | Refused> {
    try {
      return await this.deps.inApp.process(text, delivery);
    } catch (err) {
      if (!endsMessage(err)) throw err;
      this.deps.instruments.metrics.poisoned.add(1);
      this.deps.logger.log('error', 'jobs.envelope_refused', { dequeueCount: delivery.dequeueCount, code: err.code, reason: err.message });
      return { refused: err.message };
    }
  }

  /** A poison queue's message: its items recorded failed with the reason (an unreadable one is logged). */
  onPoison(text: string, queue: string): Promise<PoisonReport> {
    return this.deps.poison.process(text, queue);
  }
}
