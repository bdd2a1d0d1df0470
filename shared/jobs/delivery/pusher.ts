/**
 * The pusher: batches of webhook processors POSTed to their endpoints. It runs in a timer function,
 * which the Functions host runs on one instance at a time, so a processor's `concurrency` bounds the
 * pushes in flight to its endpoint across the app. Each push is a lease taken the same way a worker
 * takes one (./leases.ts): the endpoint's answer is completed like a worker's completion; a timeout,
 * a refused call, an answer that is not a results document or a non-2xx status puts every item back
 * as a retry with the reason (counted; past maxAttempts the item fails with it); a 429 puts the batch
 * back uncounted and pauses the endpoint for its Retry-After.
 *
 * Standard Webhooks: `webhook-id` names the batch delivery — the job and the envelope, without the
 * delivery count — so every retry of a batch carries the same id and a receiver can deduplicate on
 * it. Each push runs in a `tallyho.job.push` span continuing the submission's trace, and carries its
 * `traceparent` header, so the endpoint's own spans join the job's trace.
 */
import * as z from 'zod';

import type { Clock } from '../../clock';
import { InFlight } from '../../inFlight';
import { isAppError } from '../../errors';
import type { Logger } from '../../log';
import { failedAnswer, unreachable, unusableAnswer, type WebhookFailure } from '../../webhookFailure';
import type { JobInstruments } from '../metrics';
import type { ProcessorStore } from '../processors/processorStore';
import type { PushTransport } from '../processors/pushTransport';
import type { Granted, Leases } from './leases';
import type { WebhookProcessor } from '../processors/processorDefinition';
import { type ItemVerdict } from './verdictRules';
import { completionBody } from './verdicts';
import { webhookHeaders } from '../processors/webhookSignature';
import { carriedIdOf } from './carrierIds';

export interface PushReport {
  readonly pushes: number;
  readonly items: number;
}

/** The longest an endpoint's Retry-After pauses it. */
const maxPauseSeconds = 3600;

/** A Retry-After of seconds or an HTTP date (read against `now`, the app's clock), bounded; `fallback` when absent or unreadable. */
function retryAfterSeconds(header: string | undefined, fallback: number, now: number): number {
  if (header === undefined) return fallback;
  const seconds = /^\d+$/.test(header.trim()) ? Number(header) : (Date.parse(header) - now) / 1000;
  return Number.isFinite(seconds) ? Math.min(maxPauseSeconds, Math.max(1, Math.ceil(seconds))) : fallback;
}

const answer = z.object({ results: completionBody.shape.results });

export interface PusherDeps {
  readonly declared: ProcessorStore;
  readonly leases: Pick<Leases, 'takeMany' | 'complete' | 'defer'>;
  readonly push: PushTransport;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly instruments: JobInstruments;
}

/** The `webhook-id` of a batch delivery: the same on each of its retries (its batch keeps its id when it comes back: ./carrierIds.ts). */
function deliveryId(granted: Pick<Granted, 'lease'>): string {
  return `${granted.lease.jobId}:${carriedIdOf(granted.lease.envelope).batch}`;
}

export class Pusher {
  /** Endpoints paused by a 429, until (ms). This instance's memory: a later run elsewhere re-learns it from the endpoint. */
  private readonly pausedUntil = new Map<string, number>();

  constructor(private readonly deps: PusherDeps) {}

  async run(budgetMs: number): Promise<PushReport> {
    const until = this.deps.clock.now() + budgetMs;
    const processors = (await this.deps.declared.list()).filter((p): p is WebhookProcessor => p.type === 'webhook');
    const reports = await Promise.all(processors.map((p) => this.drain(p, until)));
    return reports.reduce((a, b) => ({ pushes: a.pushes + b.pushes, items: a.items + b.items }), { pushes: 0, items: 0 });
  }

  private async drain(processor: WebhookProcessor, until: number): Promise<PushReport> {
    const inFlight = new InFlight();
    let pushes = 0;
    let items = 0;
    while (this.deps.clock.now() < until && (this.pausedUntil.get(processor.name) ?? 0) <= this.deps.clock.now()) {
      const free = processor.concurrency - inFlight.size;
      const leases = free > 0 ? await this.deps.leases.takeMany(processor, free) : [];
      for (const granted of leases) {
        pushes++;
        items += granted.items.length;
        inFlight.add(this.push(processor, granted));
      }
      if (inFlight.size === 0) break;
      if (leases.length === 0 || inFlight.size >= processor.concurrency) await inFlight.next();
    }
    await inFlight.settled();
    return { pushes, items };
  }

  private push(processor: WebhookProcessor, granted: Granted): Promise<void> {
    const { lease, envelope } = granted;
    const attributes = {
      'tallyho.job.id': lease.jobId,
      'tallyho.job.envelope.id': lease.envelope,
      'tallyho.job.processor': processor.name,
    };
    return this.deps.instruments.spans.push.run(
      { attributes, ...(envelope.trace === undefined ? {} : { parent: envelope.trace }) },
      (span) => this.pushInSpan(processor, granted, span.traceparent()),
    );
  }

  private async pushInSpan(processor: WebhookProcessor, granted: Granted, traceparent: string | undefined): Promise<void> {
    const { deps } = this;
    const { lease } = granted;
    const body = JSON.stringify({ type: 'tallyho.jobs.batch', processor: processor.name, jobId: lease.jobId, items: granted.items });
    const now = deps.clock.now();
    const secrets = [
      processor.secret,
      ...(processor.previousSecret !== null && (processor.previousSecretUntil ?? 0) > now ? [processor.previousSecret] : []),
    ];
    const signed = webhookHeaders(secrets, deliveryId(granted), Math.floor(now / 1000), body);
    const headers = traceparent === undefined ? signed : { ...signed, traceparent };
    let verdicts: ItemVerdict[];
    try {
      const response = await deps.push.post(processor.url, body, headers, processor.timeoutSeconds * 1000);
      if (response.status === 429) {
        const delay = retryAfterSeconds(response.retryAfter, Math.max(1, processor.retry.delaySeconds), now);
        this.pausedUntil.set(processor.name, now + delay * 1000);
        await deps.leases.defer(granted, delay);
        deps.logger.log('info', 'jobs.push_throttled', { processor: processor.name, retryAfterSeconds: delay });
        return;
      }
      verdicts = this.verdicts(processor, granted, response.status, response.body);
    } catch (err) {
      verdicts = this.retryAll(processor, granted, unreachable(err));
    }
    try {
      await deps.leases.complete(granted.leaseId, verdicts);
    } catch (err) {
      // Results naming items the batch does not hold: the endpoint's fault, so every item retries with why.
      if (isAppError(err) && err.code === 'ValidationFailed') {
        const failure = unusableAnswer(200, 'results that do not fit the batch', err.issues.map((i) => i.message).join('; '));
        await deps.leases.complete(granted.leaseId, this.retryAll(processor, granted, failure)).catch(() => undefined);
        return;
      }
      deps.logger.log('warn', 'jobs.push_not_recorded', {
        processor: processor.name,
        job: lease.jobId,
        envelope: lease.envelope,
        error: err,
      });
    }
  }

  private verdicts(processor: WebhookProcessor, granted: Granted, status: number, text: string): ItemVerdict[] {
    if (status < 200 || status > 299) return this.retryAll(processor, granted, failedAnswer(status, text));
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.retryAll(processor, granted, unusableAnswer(status, 'the answer is not JSON', text));
    }
    const checked = answer.safeParse(parsed);
    if (!checked.success) return this.retryAll(processor, granted, unusableAnswer(status, 'the answer is not a results document', text));
    return checked.data.results;
  }

  /**
   * Every item of the batch back as a retry. Its reason, which every submitter of the job reads, is
   * the status or a fixed phrase; what the endpoint answered, or why it could not be reached, is
   * logged for operators (shared/webhookFailure.ts).
   */
  private retryAll(processor: WebhookProcessor, granted: Granted, failure: WebhookFailure): ItemVerdict[] {
    this.deps.logger.log('warn', 'jobs.push_failed', {
      processor: processor.name,
      job: granted.lease.jobId,
      reason: failure.reason,
      detail: failure.detail,
    });
    return granted.items.map((i) => ({ id: i.id, status: 'retry', reason: failure.reason }));
  }
}
