/**
 * Step 1 of a grant (./leaseGrant.ts): what a message received from a declared processor's queue or
 * retry lane is — an envelope to lease, or one dealt with here: not sealed by this app or no longer
 * readable (its items, when it is authentic, recorded failed `unprocessable`), naming another
 * processor (never handed to this one's workers: its items failed `unprocessable`), or of a job
 * cancelled or gone (dropped, so a cancelled job's retries are never handed out).
 */
import type { Logger } from '../../log';
import type { Signer } from '../../signing/signer';
import { type Envelope, isClaimCheck } from '../envelopes/envelope';
import { openEnvelope } from '../envelopes/seal';
import type { Completion } from '../ledger/completion';
import type { DeclaredProcessor } from '../processors/processorDefinition';
import type { ReceivedMessage } from './leaseHub';

export interface IntakeDeps {
  readonly completion: Pick<Completion, 'failItems'>;
  readonly logger: Logger;
  /** Deletes the message (one whose receipt moved on is someone else's now). */
  readonly drop: (queue: string, message: { readonly messageId: string; readonly popReceipt: string }) => Promise<void>;
  /** Whether the job is cancelled or gone. */
  readonly cancelled: (jobId: string) => Promise<boolean>;
}

export interface Intake {
  readonly processor: DeclaredProcessor;
  readonly queue: string;
  readonly message: ReceivedMessage;
  readonly signer: Signer;
  /** Which delivery of the message this is (an unreadable envelope's items fail at it). */
  readonly delivery: number;
}

/** The envelope, when the message is one to lease; otherwise it is dealt with here. */
export async function leasableEnvelope(
  deps: IntakeDeps,
  { processor, queue, message, signer, delivery }: Intake,
): Promise<Envelope | undefined> {
  const { logger, completion } = deps;
  const opened = openEnvelope(Buffer.from(message.text, 'base64').toString('utf8'), signer);
  if (!opened.ok) {
    logger.log('error', 'jobs.lease_envelope_rejected', { queue, reason: opened.reason, authentic: opened.authentic !== undefined });
    const head = opened.authentic;
    if (head !== undefined) {
      const items = head.itemIds.map((id) => ({ id, attempts: delivery, claimCheck: false }));
      await completion.failItems(head, items, 'unprocessable', `The envelope cannot be processed: ${opened.reason}`);
    }
    await deps.drop(queue, message);
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
    await deps.drop(queue, message);
    return undefined;
  }
  if (await deps.cancelled(envelope.jobId)) {
    await deps.drop(queue, message);
    return undefined;
  }
  return envelope;
}
