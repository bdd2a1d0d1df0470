/**
 * What a completed job still owes, in order: its processor's hand-on (`deliver`, e.g. billing's
 * invoice lines appended to a stream), then its JobCompleted event, then leaving the open index. Each
 * is noted on the job once done; a failure is logged and leaves it pending for the reconciler, so a
 * Service Bus or streams outage never un-completes a job.
 *
 * The hand-on runs in an invocation of its own that declares the Durable client it may need (the
 * `jobsDeliver` trigger on `<prefix>-d`): wherever a job completes — an envelope's trigger, a lease's
 * completion, a cancel, the reconciler — a pending hand-on is a message to that queue, which names
 * only the job; the trigger reads the job and does what it still owes. A lost or repeated message
 * costs nothing: `deliver` is idempotent, the job row says what is owed, and the reconciler sends the
 * message again for a job whose hand-on stays pending.
 */
import type { QueueClient } from '@azure/storage-queue';

import type { Clock } from '../../clock';
import type { DurableClient } from '../../durable/client';
import type { Logger } from '../../log';
import { LostRace } from '../../retry';
import type { JobFiles } from '../envelopes/files';
import type { JobInstruments } from '../metrics';
import type { ProcessorRegistry } from '../processors/processor';
import type { JobEventPublisher } from './events';
import { isFinished, type JobRecord, type StoredJob } from './jobRecord';
import type { JobStore } from './jobStore';

export interface OutputsDeps {
  /** The capability's metrics and spans. */
  readonly instruments: JobInstruments;
  readonly jobs: JobStore;
  readonly files: JobFiles;
  readonly processors: ProcessorRegistry;
  readonly events: JobEventPublisher;
  /** The hand-on request queue (`deliveryQueueName`). */
  readonly deliveryQueue: () => Promise<QueueClient>;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** True while a completed job still owes its delivery or its event. */
export function hasPendingOutput(job: JobRecord): boolean {
  return job.delivery === 'pending' || job.event === 'pending';
}

/** A hand-on request: the job, and nothing a writer to the queue could use to change what it owes. */
interface DeliveryRequest {
  readonly job: string;
}

export class Outputs {
  constructor(private readonly deps: OutputsDeps) {}

  /**
   * Goes on with what the job owes: outside the hand-on's trigger (no `durable`), a pending hand-on is
   * requested and the job returned as it is; in it, the hand-on runs. Then the event and the close.
   * A step someone else noted first ends this call with the job as it now is (they go on).
   */
  async finish(stored: StoredJob, durable?: DurableClient): Promise<StoredJob> {
    let current = stored;
    const { job } = current;
    if (job.delivery === 'pending') {
      if (durable === undefined) {
        await this.requestDelivery(job);
        return current;
      }
      const delivered = await this.step(current, 'delivery', () => this.deliver(job, durable));
      if (delivered.stop) return delivered.stored;
      current = delivered.stored;
    }
    if (current.job.event === 'pending') {
      const published = await this.step(current, 'event', () => this.deps.events.publish(current.job));
      if (published.stop) return published.stored;
      current = published.stored;
      this.deps.logger.log('info', 'jobs.event', { job: job.id, round: job.round, event: current.job.event });
    }
    if (isFinished(current.job.phase) && !hasPendingOutput(current.job)) await this.close(current.job);
    return current;
  }

  /** The `jobsDeliver` trigger: the job a request names does what it still owes, on this invocation's Durable client. */
  async onDeliveryRequest(text: string, durable: DurableClient): Promise<{ job: string | undefined; owed: boolean }> {
    const job = requestedJob(text);
    if (job === undefined) {
      this.deps.logger.log('error', 'jobs.delivery_request_unreadable', { preview: text.slice(0, 200) });
      return { job: undefined, owed: false };
    }
    const stored = await this.deps.jobs.read(job);
    if (stored === undefined || !hasPendingOutput(stored.job)) return { job, owed: false };
    const { trace } = stored.job;
    const attributes = { 'tallyho.job.id': job, 'tallyho.job.processor': stored.job.processor };
    // In the submission's trace, as the completion that asked for it.
    await this.deps.instruments.spans.deliver.run({ attributes, ...(trace === undefined ? {} : { parent: trace }) }, () =>
      this.finish(stored, durable),
    );
    return { job, owed: true };
  }

  /** A finished job with nothing left owed: it leaves the open index and starts its retention time. */
  async close(job: JobRecord): Promise<void> {
    await this.deps.jobs.markFinished(job.id, job.completedAt ?? this.deps.clock.now());
    await this.deps.jobs.clearOpen(job.id);
  }

  private async requestDelivery(job: JobRecord): Promise<void> {
    const request: DeliveryRequest = { job: job.id };
    try {
      const queue = await this.deps.deliveryQueue();
      await queue.sendMessage(Buffer.from(JSON.stringify(request), 'utf8').toString('base64'), { messageTimeToLive: -1 });
    } catch (err) {
      // Left pending: the reconciler requests it again once the job has been idle TALLYHO_JOBS_STALE_SECONDS.
      this.deps.logger.log('error', 'jobs.delivery_request_failed', { job: job.id, round: job.round, error: err });
    }
  }

  private deliver(job: JobRecord, durable: DurableClient): Promise<'delivered' | 'notConfigured'> {
    const processor = this.deps.processors.get(job.processor);
    if (processor?.deliver === undefined) return Promise.resolve('notConfigured');
    return processor.deliver({
      jobId: job.id,
      round: job.round,
      readFile: async (name) => (await this.deps.files.readFile(job.id, name))?.body.toString('utf8'),
      durable,
    });
  }

  /**
   * One owed step: run it, then note its outcome on the job. `stop` when it failed (logged; left
   * pending) or someone else noted the job first (then `stored` is the job as it now is).
   */
  private async step<K extends 'delivery' | 'event'>(
    stored: StoredJob,
    kind: K,
    run: () => Promise<JobRecord[K]>,
  ): Promise<{ stored: StoredJob; stop: boolean }> {
    const { job } = stored;
    let outcome: JobRecord[K];
    try {
      outcome = await run();
    } catch (err) {
      this.deps.logger.log('error', kind === 'delivery' ? 'jobs.delivery_failed' : 'jobs.event_failed', {
        job: job.id,
        round: job.round,
        error: err,
      });
      return { stored, stop: true };
    }
    try {
      const change: Partial<JobRecord> =
        kind === 'delivery' ? { delivery: outcome as JobRecord['delivery'] } : { event: outcome as JobRecord['event'] };
      return { stored: await this.deps.jobs.update({ ...job, ...change, updatedAt: this.deps.clock.now() }, stored.etag), stop: false };
    } catch (err) {
      // Someone else recorded it (or retry-failed moved on): their write stands.
      if (!(err instanceof LostRace)) throw err;
      return { stored: (await this.deps.jobs.read(job.id)) ?? stored, stop: true };
    }
  }
}

/** The job a request message of this capability's queues names (hand-on, cancel), or undefined when it names none. */
export function requestedJob(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as unknown;
    const job = typeof parsed === 'object' && parsed !== null ? (parsed as { job?: unknown }).job : undefined;
    return typeof job === 'string' && job.length <= 64 ? job : undefined;
  } catch {
    return undefined;
  }
}
