/**
 * The work queues' triggers: an envelope (./inApp.ts) and a poisoned one (./poison.ts). At this
 * boundary a failure is judged by what it is (shared/errors.ts `endsMessage`): one the message itself
 * causes — a message that is not an envelope of this app — ends it now, with why logged and counted
 * among the poisoned envelopes, instead of being delivered again until the poison queue takes it.
 * Any other failure of a work queue's message moves it to the queue's retry lane
 * (../envelopes/queues.ts), visible after the in-app back-off before a second attempt: delivered
 * again there, it comes back on time, not behind the work queue's backlog (a message the host made
 * visible again in the work queue would wait behind all of it). In the lane, or when the move fails,
 * the failure is thrown and the host delivers the message again where it is, up to maxDequeueCount
 * times, then to that queue's poison queue.
 */
import { endsMessage } from '../../errors';
import type { Logger } from '../../log';
import type { JobInstruments } from '../metrics';
import type { Delivery, EnvelopeReport, InAppEngine } from './inApp';
import type { PoisonHandler, PoisonReport } from './poison';
import type { ProcessorQueues } from './processorQueues';

/** A message ended without being processed, and why. */
export interface Refused {
  readonly refused: string;
}

/** A work queue's message that failed, moved to the queue's retry lane (and so done with here). */
export interface Moved {
  readonly movedTo: string;
  readonly reason: string;
}

/** Where a work queue's message was delivered from. */
export interface WorkDelivery extends Delivery {
  /** The retry lane a failed message moves to: a work queue's trigger names its lane; a lane's trigger names none. */
  readonly lane?: string;
}

export interface WorkQueuesDeps {
  readonly inApp: InAppEngine;
  readonly poison: PoisonHandler;
  /** Puts a failed message into a lane (held invisible for its back-off, as a lease's batch is put into a declared lane). */
  readonly processorQueues: Pick<ProcessorQueues, 'put'>;
  /** The in-app back-off before a second attempt (TALLYHO_JOBS_RETRY_DELAY_SECONDS), in seconds. */
  readonly failedDelaySeconds: number;
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

  /** A work queue's message: processed, refused or moved to its lane (and so done with); throws for the host to deliver it again. */
  async onMessage(text: string, delivery: WorkDelivery): Promise<EnvelopeReport | Refused | Moved> {
    try {
      return await this.deps.inApp.process(text, delivery);
    } catch (err) {
      if (!endsMessage(err)) return this.toLane(text, delivery, err);
      this.deps.instruments.metrics.poisoned.add(1);
      this.deps.logger.log('error', 'jobs.envelope_refused', { dequeueCount: delivery.dequeueCount, code: err.code, reason: err.message });
      return { refused: err.message };
    }
  }

  /** A failed work queue's message, sent on to its lane after the back-off; throws `err` in a lane, or when the move fails. */
  private async toLane(text: string, { lane, dequeueCount }: WorkDelivery, err: unknown): Promise<Moved> {
    if (lane === undefined) throw err;
    const { processorQueues, failedDelaySeconds, logger } = this.deps;
    try {
      // The message as the queue held it: base64 of the sealed envelope (host.json messageEncoding).
      await processorQueues.put(lane, Buffer.from(text, 'utf8').toString('base64'), failedDelaySeconds);
    } catch (sendErr) {
      logger.log('warn', 'jobs.envelope_not_moved', { lane, error: sendErr });
      throw err;
    }
    const reason = err instanceof Error ? err.message : String(err);
    logger.log('warn', 'jobs.envelope_moved_to_lane', { lane, dequeueCount, delaySeconds: failedDelaySeconds, reason });
    return { movedTo: lane, reason };
  }

  /** A poison queue's message: its items recorded failed with the reason (an unreadable one is logged). */
  onPoison(text: string, queue: string): Promise<PoisonReport> {
    return this.deps.poison.process(text, queue);
  }
}
