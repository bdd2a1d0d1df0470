/**
 * Leases: how a declared processor's items reach its workers (and the pusher, for a webhook).
 *
 * - Taking: one message of the processor's retry lane or else of its queue, received invisible for
 *   the lease and made a lease by ./leaseGrant.ts (the one place leases are handed out; a batch from
 *   the queue moves into the lane there, so its retries and a lease that runs out come back on time).
 * - Extending: the message's visibility moved on with its pop receipt; the old lease id is spent.
 *   The first use of a lease (an extension or the completion) puts its delivery on record as received
 *   (../ledger/leaseLog.ts): only such deliveries count as attempts (./itemAttempts.ts).
 * - Completing: checked against the lease id alone (MAC, end, the items' tags), then the message is
 *   held a little longer with its receipt (which proves the lease still holds it: a completion after
 *   it ran out is a 409 and changes nothing), the final results are recorded insert-if-absent (each
 *   exactly once however often the message travels), the report is kept with the delivery, and the
 *   message is deleted, or — with items to retry or not mentioned — made visible again after the
 *   back-off. The same completion again (its answer was lost) is answered with the kept report.
 */
import type { Clock } from '../../clock';
import { AppError } from '../../errors';
import type { Logger } from '../../log';
import type { Signer } from '../../signing/signer';
import type { EnvelopeQueues } from '../envelopes/queues';
import type { Completion } from '../ledger/completion';
import type { JobRows } from '../ledger/jobRows';
import type { Delivery, LeaseLog, LeaseReport } from '../ledger/leaseLog';
import { type ResultStore } from '../ledger/resultStore';
import { countOutcomes, type JobInstruments } from '../metrics';
import type { ProcessorRegistry } from '../processors/processor';
import type { DeclaredProcessor } from '../processors/processorDefinition';
import type { ProcessorStore } from '../processors/processorStore';
import { delayBefore } from './itemAttempts';
import type { LeaseGranter } from './leaseGrant';
import type { LeaseHub, WaitEnd } from './leaseHub';
import { type Lease, leaseAttempt, leaseSize, openLease, renewed, sealLease } from './leaseId';
import { traceLease, type TracedLease } from './leaseSpan';
import { type ProcessorQueues, ReceiptLost, unlessLost } from './processorQueues';
import { type Granted, leaseSeconds, rulesOf } from './leaseTerms';
import { checkVerdicts, finalsOf, type ItemVerdict } from './verdictRules';

export type { Granted } from './leaseTerms';

export interface CompletionReport {
  readonly recorded: number;
  readonly alreadyFinal: number;
  /** Items that come back later (retry, or not mentioned), counted as an attempt. */
  readonly retrying: number;
  readonly jobFinished: boolean;
}

export interface TakeOptions {
  /** At most this many items (default and ceiling: the processor's batchSize). */
  readonly maxItems?: number;
  /** How long to wait for a batch when there is none (0: answer at once). */
  readonly waitSeconds: number;
  /** Who waits (a Caller id): lease waiters are fair shares by caller (./leaseHub.ts). */
  readonly holder: string;
  /** Told why a wait ended without a batch (ran out, lost its place, the instance stopping). */
  readonly onEnd?: (why: WaitEnd) => void;
}

export interface LeasesDeps {
  readonly declared: ProcessorStore;
  /** The in-app processors (a lease request naming one is told so). */
  readonly inApp: ProcessorRegistry;
  readonly granter: LeaseGranter;
  /** This instance's long polls for leases, one poll loop per processor queue. */
  readonly hub: LeaseHub;
  readonly rows: JobRows;
  readonly results: ResultStore;
  readonly leaseLog: LeaseLog;
  readonly queues: EnvelopeQueues;
  readonly processorQueues: ProcessorQueues;
  readonly completion: Completion;
  /** TALLYHO_JOBS_MAX_ITEMS: no completion holds more results. */
  readonly maxItems: number;
  readonly signer: () => Promise<Signer>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Item outcomes are counted here for leased and pushed processors, as the in-app engine counts its own. */
  readonly instruments: JobInstruments;
}

/** How long a completion holds the message while it records (the message is deleted or re-timed after). */
const holdSeconds = 60;

function lost(): AppError {
  return new AppError('Conflict', 'The lease no longer holds its batch (it was completed, extended under a newer lease id, or ran out)', {
    extra: { reason: 'leaseLost' },
  });
}

export class Leases {
  constructor(private readonly deps: LeasesDeps) {}

  /** A lease on the next batch of `name`'s items, or undefined when none came within the wait. */
  async take(name: string, options: TakeOptions): Promise<TracedLease | undefined> {
    const { deps } = this;
    const processor = await this.declared(name);
    if (processor.type !== 'external') {
      throw new AppError('Conflict', `${name} is a webhook processor: the app pushes its batches, they are not leased`);
    }
    const maxItems = Math.min(options.maxItems ?? processor.batchSize, processor.batchSize);
    const deadline = deps.clock.now() + options.waitSeconds * 1000;
    const queue = deps.granter.queueOf(processor);
    const lane = deps.granter.laneOf(processor);
    for (;;) {
      const message = await deps.hub.next(queue, leaseSeconds(processor), deadline, options.holder, lane, options.onEnd);
      if (message === undefined) return undefined;
      const granted = await deps.granter.grant(processor, message, maxItems, await deps.signer());
      if (granted !== undefined) return traceLease(deps.instruments, granted, message.receivedAt);
      if (deps.clock.now() >= deadline) {
        options.onEnd?.('timeout');
        return undefined;
      }
    }
  }

  /** Who works `name` (its declaration's `workers`), or undefined when no processor of that name is declared. */
  async workersOf(name: string): Promise<{ processor: string; workers: readonly string[] } | undefined> {
    const processor = await this.deps.declared.get(name);
    return processor === undefined ? undefined : { processor: name, workers: processor.workers ?? [] };
  }

  /** Who works the processor of a lease, or undefined when the id is no lease of this app. */
  async workersOfLease(leaseId: string): Promise<{ processor: string; workers: readonly string[] } | undefined> {
    const lease = openLease(leaseId, await this.deps.signer());
    return lease === undefined ? undefined : this.workersOf(lease.processor);
  }

  /** Up to `count` leases of `processor` at once without waiting (the pusher). */
  async takeMany(processor: DeclaredProcessor, count: number): Promise<Granted[]> {
    const { deps } = this;
    const receivedAt = deps.clock.now();
    const max = Math.min(32, count);
    // The retry lane first, as every lease request reads it (./leaseGrant.ts).
    const lane = deps.granter.laneOf(processor);
    const queue = deps.granter.queueOf(processor);
    const fromLane = (await deps.processorQueues.receive(lane, max, leaseSeconds(processor))).map((m) => ({ ...m, queue: lane }));
    const fromQueue =
      fromLane.length < max
        ? (await deps.processorQueues.receive(queue, max - fromLane.length, leaseSeconds(processor))).map((m) => ({ ...m, queue }))
        : [];
    const messages = [...fromLane, ...fromQueue];
    const signer = await deps.signer();
    const granted = await Promise.all(
      messages.map((m) => deps.granter.grant(processor, { ...m, receivedAt }, processor.batchSize, signer)),
    );
    return granted.filter((g): g is Granted => g !== undefined);
  }

  /** A heartbeat: the lease lasts another lease duration from now, under a new lease id (the old one is spent). */
  async extend(leaseId: string): Promise<{ leaseId: string; expiresAt: number }> {
    const { lease, processor } = await this.openHeld(leaseId);
    // On record before the receipt moves: whoever holds a lease id received that delivery.
    if (!lease.used) await this.recordUse(lease);
    const at = this.deps.clock.now();
    const popReceipt = await this.moveOn(lease, leaseSeconds(processor));
    const next = renewed(lease, popReceipt, at + leaseSeconds(processor) * 1000);
    return { leaseId: sealLease(next, await this.deps.signer()), expiresAt: next.expiresAt };
  }

  /** Records a lease's results; see the module comment for what happens to each kind. */
  async complete(leaseId: string, verdicts: readonly ItemVerdict[]): Promise<CompletionReport> {
    const { deps } = this;
    let held: { lease: Lease; processor: DeclaredProcessor; popReceipt: string };
    try {
      held = await this.holdForCompletion(leaseId, verdicts);
    } catch (err) {
      // The lease ran out or no longer holds its message: if this delivery's completion was recorded, this is that one again.
      const first = isLeaseConflict(err) ? await this.firstReport(leaseId) : undefined;
      if (first === undefined) throw err;
      return { ...first.report, jobFinished: await deps.completion.check(first.lease.jobId, first.lease.jobItems) };
    }
    const { lease, processor, popReceipt } = held;
    const signer = await deps.signer();
    const { finals, retryAttempt } = finalsOf(lease, verdicts, signer, processor);
    const recorded = await deps.results.record(lease.jobId, lease.round, finals, true);
    const pending = leaseSize(lease) - finals.length;
    const report = { recorded: recorded.recorded, alreadyFinal: recorded.alreadyFinal, retrying: pending };
    // Kept before the message goes: a completion sent again after this finds it, whatever happens next.
    const delivery = deliveryOf(lease);
    if (delivery !== undefined) await deps.leaseLog.completed(delivery, report);
    const message = { messageId: lease.messageId, popReceipt };
    if (pending === 0) await deps.granter.drop(lease.queue, message);
    else {
      // What is left comes back after the back-off of its next attempt (not mentioned: as if retried).
      const next = Math.max(retryAttempt, leaseAttempt(lease)) + 1;
      const delay = delayBefore(rulesOf(processor), next);
      await unlessLost(deps.processorQueues.update(lease.queue, lease.messageId, popReceipt, delay));
      // Visible by then (the update was made before now): this instance looks at the lane at that moment.
      deps.hub.due(lease.queue, deps.clock.now() + delay * 1000);
    }
    countOutcomes(deps.instruments, lease.processor, finals, pending, leaseAttempt(lease));
    const jobFinished = await deps.completion.check(lease.jobId, lease.jobItems);
    deps.logger.log('debug', 'jobs.lease_completed', {
      processor: lease.processor,
      job: lease.jobId,
      envelope: lease.envelope,
      recorded: recorded.recorded,
      retrying: pending,
    });
    return { ...report, jobFinished };
  }

  /**
   * Puts a leased batch back without counting the attempt (an endpoint that answered 429): the items
   * go into a new message at the attempt they are at, visible after `delaySeconds`, and the leased
   * message is deleted (a handover: ./carriage.ts).
   */
  defer(granted: Granted, delaySeconds: number): Promise<void> {
    return this.deps.granter.putBack(granted, delaySeconds);
  }

  private async declared(name: string): Promise<DeclaredProcessor> {
    const processor = await this.deps.declared.get(name);
    if (processor === undefined) {
      const inApp = this.deps.inApp.has(name) ? ` (${name} runs inside the app: its items are not leased)` : '';
      throw new AppError('NotFound', `No declared processor ${name}${inApp}`);
    }
    return processor;
  }

  private async openHeld(leaseId: string): Promise<{ lease: Lease; processor: DeclaredProcessor }> {
    const { deps } = this;
    const lease = openLease(leaseId, await deps.signer());
    if (lease === undefined) throw new AppError('NotFound', 'Not a lease of this app (or it was altered)');
    if (deps.clock.now() >= lease.expiresAt) {
      throw new AppError(
        'Conflict',
        `The lease expired at ${new Date(lease.expiresAt).toISOString()}; its items come back in another lease`,
        {
          extra: { reason: 'leaseExpired' },
        },
      );
    }
    const stored = await deps.rows.read(lease.jobId);
    if (stored === undefined) throw new AppError('NotFound', `Job ${lease.jobId} no longer exists`);
    if (stored.job.cancelledAt !== null) {
      await deps.processorQueues.delete(lease.queue, lease.messageId, lease.popReceipt).catch(() => undefined);
      throw new AppError('Conflict', `Job ${lease.jobId} was cancelled: its leases are refused`, { extra: { reason: 'jobCancelled' } });
    }
    return { lease, processor: await this.declared(lease.processor) };
  }

  /** The lease checked and its message held while the completion records (the verdicts checked against it first). */
  private async holdForCompletion(
    leaseId: string,
    verdicts: readonly ItemVerdict[],
  ): Promise<{ lease: Lease; processor: DeclaredProcessor; popReceipt: string }> {
    const { lease, processor } = await this.openHeld(leaseId);
    checkVerdicts(lease, verdicts, await this.deps.signer(), this.deps.maxItems);
    if (!lease.used) await this.recordUse(lease);
    return { lease, processor, popReceipt: await this.moveOn(lease, holdSeconds) };
  }

  /** The report of the completion recorded for the delivery `leaseId` names, if there is one. */
  private async firstReport(leaseId: string): Promise<{ lease: Lease; report: LeaseReport } | undefined> {
    const lease = openLease(leaseId, await this.deps.signer());
    const delivery = lease === undefined ? undefined : deliveryOf(lease);
    const report = delivery === undefined ? undefined : await this.deps.leaseLog.report(delivery);
    return lease === undefined || report === undefined ? undefined : { lease, report };
  }

  private async recordUse(lease: Lease): Promise<void> {
    const delivery = deliveryOf(lease);
    if (delivery !== undefined) await this.deps.leaseLog.used(delivery);
  }

  /** The leased message visible again after `seconds`; its new receipt. A receipt that moved on is a lost lease (409). */
  private async moveOn(lease: Lease, seconds: number): Promise<string> {
    try {
      return await this.deps.processorQueues.update(lease.queue, lease.messageId, lease.popReceipt, seconds);
    } catch (err) {
      if (err instanceof ReceiptLost) throw lost();
      throw err;
    }
  }
}

/** The delivery a lease is of (undefined for a lease id of the first form, which does not name it). */
function deliveryOf(lease: Lease): Delivery | undefined {
  return lease.delivery > 0 ? { jobId: lease.jobId, messageId: lease.messageId, delivery: lease.delivery } : undefined;
}

/** A 409 that says the lease no longer holds its batch (ran out, or its receipt moved on). */
function isLeaseConflict(err: unknown): boolean {
  if (!(err instanceof AppError) || err.code !== 'Conflict') return false;
  const reason = err.extra?.reason;
  return reason === 'leaseLost' || reason === 'leaseExpired';
}
