/**
 * What a lease is made of, for ./leaseGrant.ts (which hands leases out), ./leases.ts and the pusher:
 * a lease's length and attempt rules by processor, and the lease itself built on a held message
 * (step 4 of a grant: the lease id with its MAC tags, the items' data with claim checks redeemed).
 */
import type { Clock } from '../../clock';
import type { Logger } from '../../log';
import { mapLimited } from '../../mapLimited';
import type { Signer } from '../../signing/signer';
import { type Envelope, type EnvelopeItem, isClaimCheck, type JsonObject } from '../envelopes/envelope';
import type { JobFiles } from '../envelopes/files';
import type { EnvelopeQueues } from '../envelopes/queues';
import type { Completion } from '../ledger/completion';
import type { CarrierRows } from '../ledger/carrierRows';
import type { JobRows } from '../ledger/jobRows';
import type { LeaseLog } from '../ledger/leaseLog';
import type { ResultStore } from '../ledger/resultStore';
import { type DeclaredProcessor, pushLeaseMarginSeconds } from '../processors/processorDefinition';
import type { AttemptRules } from './itemAttempts';
import type { ReceivedMessage } from './leaseHub';
import { type Lease, leaseTags, sealLease } from './leaseId';
import type { ProcessorQueues } from './processorQueues';

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
  /** Which message carries each batch (./carriage.ts). */
  readonly carriers: CarrierRows;
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
export interface Received {
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
export interface Held {
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

/** Step 4 of a grant (./leaseGrant.ts): the lease on what is held, with its items' data (claim checks redeemed). */
export async function leaseOf(
  deps: Pick<GrantDeps, 'files' | 'settings' | 'clock' | 'logger'>,
  { processor, queue, message, signer, delivery, counted }: Received,
  envelope: Envelope,
  held: Held,
): Promise<Granted> {
  const { files, settings, clock, logger } = deps;
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
