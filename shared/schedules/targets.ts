/**
 * Running a schedule's target once. Delivery is at least once: a run whose activity is retried
 * after a crash may send twice, so every message carries the run id (`runId`, also the Service Bus
 * `messageId`, so duplicate detection on the entity drops the copy) for consumers to deduplicate.
 *
 * Failures of the target itself (a webhook answering 500, a refused URL, a capability that is not
 * there) are outcomes and are recorded; failures of our own plumbing that a retry may fix (storage
 * or Service Bus unavailable) are thrown, so the activity is retried with back-off.
 */
import type { QueueClient } from '@azure/storage-queue';

import { isAppError } from '../errors';
import { isTransientStorageError } from '../storage/errors';
import { type Creator, describeCreator } from './creator';
import type { JobItem, JsonValue, Target } from './definition';
import type { Fire } from './policies';
import type { ScheduleSender } from './scheduledDelivery';
import { callWebhook, type WebhookOptions, WebhookRefused } from './webhook/call';

export interface RunContext {
  readonly scheduleId: string;
  readonly runId: string;
  readonly fire: Fire;
  readonly createdBy: Creator | undefined;
}

export type TargetOutcome =
  | { readonly outcome: 'succeeded'; readonly detail?: string }
  | { readonly outcome: 'failed'; readonly reason: string }
  | { readonly outcome: 'started'; readonly handle: string };

export type PollOutcome = TargetOutcome | { readonly outcome: 'running' };

/** The gates capability's release use-case, as the schedules capability needs it. */
export interface GateReleasePort {
  /** Releases the gate (idempotent); answers how it went, e.g. `released` or `alreadyReleased`. */
  release(gate: string, by: string, note: string): Promise<string>;
}

/** The jobs capability's submit and status use-cases, as the schedules capability needs them. */
export interface JobPort {
  /** Submits a job (idempotent by `key`) and answers its handle. */
  submit(processor: string, items: readonly JobItem[], key: string): Promise<string>;
  status(
    handle: string,
  ): Promise<
    | { readonly state: 'running' }
    | { readonly state: 'succeeded'; readonly detail?: string }
    | { readonly state: 'failed'; readonly reason: string }
  >;
}

export interface TargetDeps {
  readonly queue: (name: string) => Promise<QueueClient>;
  /** A sender for the entity; undefined when no Service Bus is configured. */
  readonly serviceBusSender: (entity: string) => ScheduleSender | undefined;
  readonly webhook: WebhookOptions;
  readonly gates: GateReleasePort | undefined;
  readonly jobs: JobPort | undefined;
}

export const unavailable = {
  gates: 'gates capability not available',
  jobs: 'jobs capability not available',
  serviceBus: 'Service Bus is not configured (ServiceBusConnection)',
} as const;

/** What a queue message or Service Bus body carries: the message as given. */
function messageText(message: JsonValue): string {
  return typeof message === 'string' ? message : JSON.stringify(message);
}

function isTransient(err: unknown): boolean {
  if (isAppError(err)) return err.retryable;
  if (typeof err === 'object' && err !== null && 'retryable' in err && err.retryable === true) return true; // Service Bus errors
  return isTransientStorageError(err);
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return (text.split('\n')[0] ?? text).slice(0, 300);
}

async function send(target: Target, ctx: RunContext, deps: TargetDeps): Promise<TargetOutcome> {
  switch (target.type) {
    case 'queueMessage': {
      const queue = await deps.queue(target.queue);
      // Base64, as the Functions queue trigger (and output binding) expects by default.
      const sent = await queue.sendMessage(Buffer.from(messageText(target.message), 'utf8').toString('base64'));
      return { outcome: 'succeeded', detail: `queued ${sent.messageId}` };
    }
    case 'serviceBus': {
      const sender = deps.serviceBusSender(target.entity);
      if (sender === undefined) return { outcome: 'failed', reason: unavailable.serviceBus };
      await sender.sendMessages({
        body: target.message,
        contentType: 'application/json',
        messageId: ctx.runId,
        ...(target.sessionId === undefined ? {} : { sessionId: target.sessionId }),
        applicationProperties: { scheduleId: ctx.scheduleId, runId: ctx.runId, scheduledFor: ctx.fire.at },
      });
      return { outcome: 'succeeded', detail: `sent ${ctx.runId}` };
    }
    case 'webhook': {
      const payload = {
        scheduleId: ctx.scheduleId,
        runId: ctx.runId,
        scheduledFor: ctx.fire.at,
        kind: ctx.fire.kind,
        ...(target.payload === undefined ? {} : { payload: target.payload }),
      };
      const answer = await callWebhook(target.url, payload, deps.webhook);
      if (answer.status >= 200 && answer.status < 300) return { outcome: 'succeeded', detail: `HTTP ${answer.status}` };
      return { outcome: 'failed', reason: `HTTP ${answer.status}${answer.body === '' ? '' : `: ${answer.body.slice(0, 200)}`}` };
    }
    case 'gateRelease': {
      if (deps.gates === undefined) return { outcome: 'failed', reason: unavailable.gates };
      const detail = await deps.gates.release(
        target.gate,
        `schedule:${ctx.scheduleId}`,
        `run ${ctx.runId} due ${ctx.fire.at}; schedule ${describeCreator(ctx.createdBy)}`,
      );
      return { outcome: 'succeeded', detail };
    }
    case 'job': {
      if (deps.jobs === undefined) return { outcome: 'failed', reason: unavailable.jobs };
      return { outcome: 'started', handle: await deps.jobs.submit(target.processor, target.items, ctx.runId) };
    }
  }
}

export async function runTarget(target: Target, ctx: RunContext, deps: TargetDeps): Promise<TargetOutcome> {
  try {
    return await send(target, ctx, deps);
  } catch (err) {
    if (err instanceof WebhookRefused) return { outcome: 'failed', reason: `refused: ${err.message}` };
    if (target.type !== 'webhook' && isTransient(err)) throw err;
    return { outcome: 'failed', reason: firstLine(err) };
  }
}

/** Asks a target that completes later how its run is going (jobs only). */
export async function pollTarget(target: Target, handle: string, deps: TargetDeps): Promise<PollOutcome> {
  if (target.type !== 'job') return { outcome: 'failed', reason: `a ${target.type} run has nothing to poll` };
  if (deps.jobs === undefined) return { outcome: 'failed', reason: unavailable.jobs };
  try {
    const status = await deps.jobs.status(handle);
    if (status.state === 'running') return { outcome: 'running' };
    if (status.state === 'failed') return { outcome: 'failed', reason: status.reason };
    return { outcome: 'succeeded', ...(status.detail === undefined ? {} : { detail: status.detail }) };
  } catch (err) {
    if (isTransient(err)) throw err;
    return { outcome: 'failed', reason: firstLine(err) };
  }
}
