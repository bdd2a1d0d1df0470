/**
 * Running an effect once. Delivery is at least once: a run whose activity is retried after a crash
 * may send twice, so everything sent carries the origin (the run id, also the Service Bus
 * `messageId`, so duplicate detection on the entity drops the copy) for consumers to deduplicate.
 *
 * Failures of the effect itself (a webhook answering 500, a refused URL, a capability that is not
 * there) are outcomes; failures of the app's own plumbing that a retry may fix (storage or Service
 * Bus unavailable) are thrown, so the activity is retried with back-off.
 */
import type { QueueClient } from '@azure/storage-queue';
import type { ServiceBusSender } from '@azure/service-bus';

import { isAppError } from '../errors';
import { isTransientStorageError } from '../storage/errors';
import { noTelemetry, type Telemetry } from '../telemetry/port';
import { failedAnswer, storedReason, unreachable } from '../webhookFailure';
import { unavailable } from './admission';
import { type Effect, effectKey, type EffectOrigin, type EffectOutcome, type JobItem, type JsonValue, jobKey, type Queued } from './effect';
import { effectTelemetry } from './metrics';
import { callWebhook, type WebhookOptions, WebhookRefused } from './webhook/call';

/** The gates capability's release use-case, bound to the Durable client of the invocation. */
export interface GateReleasePort {
  /** Releases the gate (idempotent); answers how it went, e.g. `released` or `alreadyReleased`. */
  release(gate: string, by: string, note: string): Promise<string>;
}

/** The jobs capability's submit and status use-cases. */
export interface JobPort {
  /** Submits a job (idempotent by `key`) and answers its handle. */
  /** `owner`: the Caller id the job belongs to (the schedule's or gated run's owner). */
  submit(processor: string, items: readonly JobItem[], key: string, owner?: string): Promise<string>;
  status(
    handle: string,
  ): Promise<
    | { readonly state: 'running' }
    | { readonly state: 'succeeded'; readonly detail?: string }
    | { readonly state: 'failed'; readonly reason: string }
  >;
}

export interface EffectPorts {
  readonly queue: (name: string) => Promise<QueueClient>;
  /** A sender for the entity; undefined when no Service Bus is configured. */
  readonly serviceBusSender: (entity: string) => Pick<ServiceBusSender, 'sendMessages'> | undefined;
  readonly webhook: WebhookOptions;
  readonly gates: GateReleasePort | undefined;
  readonly jobs: JobPort | undefined;
}

/**
 * What a queue message carries: the message as given, a JSON object with the sending span's
 * `traceparent` as a member (unless it has one: a storage message has no headers to carry it).
 */
function messageText(message: JsonValue, traceparent: string | undefined): string {
  if (typeof message === 'string') return message;
  const room = traceparent !== undefined && typeof message === 'object' && message !== null && !Array.isArray(message);
  return JSON.stringify(room && !('traceparent' in message) ? { ...message, traceparent } : message);
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

/** The origin as a message's application properties (and the first fields of a webhook's body). */
function originProperties(origin: EffectOrigin): Record<string, string | number> {
  return origin.kind === 'gateRun'
    ? { gate: origin.gate, generation: origin.generation, runId: origin.runId }
    : { scheduleId: origin.scheduleId, runId: origin.runId, scheduledFor: origin.scheduledFor };
}

/** Who a gate release is recorded as, and the note the gate's audit keeps. */
function releasedBy(origin: EffectOrigin): { by: string; note: string } {
  return origin.kind === 'gateRun'
    ? { by: `gate:${origin.gate}`, note: `run ${origin.runId} of generation ${origin.generation}` }
    : { by: `schedule:${origin.scheduleId}`, note: `run ${origin.runId} due ${origin.scheduledFor}; schedule ${origin.createdBy}` };
}

type Spans = ReturnType<typeof spansOf>;
const spansOf = (telemetry: Telemetry) => telemetry.of(effectTelemetry).spans;

const sending = (system: 'azure_storage_queues' | 'servicebus', destination: string) => ({
  attributes: {
    'messaging.system': system,
    'messaging.operation.type': 'send',
    'messaging.operation.name': 'send',
    'messaging.destination.name': destination,
  } as const,
});

async function enqueue(ports: EffectPorts, effect: Extract<Effect, { type: 'enqueue' }>, spans: Spans): Promise<Queued> {
  return spans.send.run(sending('azure_storage_queues', effect.queue), async (span) => {
    const queue = await ports.queue(effect.queue);
    // Base64, as the Functions queue trigger (and output binding) expects by default (host.json messageEncoding).
    const sent = await queue.sendMessage(Buffer.from(messageText(effect.message, span.traceparent()), 'utf8').toString('base64'));
    return { queue: queue.name, messageId: sent.messageId };
  });
}

/** The sending span's trace context as Service Bus application properties (Diagnostic-Id: the Azure SDKs' name for it). */
function traceProperties(traceparent: string | undefined): Record<string, string> {
  return traceparent === undefined ? {} : { traceparent, 'Diagnostic-Id': traceparent };
}

async function send(effect: Effect, origin: EffectOrigin, ports: EffectPorts, spans: Spans): Promise<EffectOutcome> {
  switch (effect.type) {
    case 'enqueue': {
      const queued = await enqueue(ports, effect, spans);
      return { outcome: 'succeeded', detail: `queued ${queued.messageId}`, queued };
    }
    case 'serviceBus': {
      const sender = ports.serviceBusSender(effect.entity);
      if (sender === undefined) return { outcome: 'failed', reason: unavailable.serviceBus };
      const key = effectKey(origin);
      await spans.send.run(sending('servicebus', effect.entity), (span) =>
        sender.sendMessages({
          body: effect.message,
          contentType: 'application/json',
          messageId: key,
          ...(effect.sessionId === undefined ? {} : { sessionId: effect.sessionId }),
          applicationProperties: { ...originProperties(origin), ...traceProperties(span.traceparent()) },
        }),
      );
      return { outcome: 'succeeded', detail: `sent ${key}` };
    }
    case 'webhook': {
      const kind = origin.kind === 'scheduleRun' ? { kind: origin.fireKind } : {};
      const payload = { ...originProperties(origin), ...kind, ...(effect.payload === undefined ? {} : { payload: effect.payload }) };
      const answer = await spans.webhook.run({ attributes: { 'http.request.method': 'POST' } }, async (span) => {
        const traceparent = span.traceparent();
        const called = await callWebhook(effect.url, payload, ports.webhook, traceparent === undefined ? {} : { headers: { traceparent } });
        span.setAttributes({ 'http.response.status_code': called.status });
        return called;
      });
      if (answer.status >= 200 && answer.status < 300) return { outcome: 'succeeded', detail: `HTTP ${answer.status}` };
      // Stored whole for admin-level readers; function-level views show callerReason (shared/webhookFailure.ts).
      return { outcome: 'failed', reason: storedReason(failedAnswer(answer.status, answer.body)) };
    }
    case 'gateRelease': {
      if (ports.gates === undefined) return { outcome: 'failed', reason: unavailable.gates };
      const { by, note } = releasedBy(origin);
      return { outcome: 'succeeded', detail: await ports.gates.release(effect.gate, by, note) };
    }
    case 'job': {
      if (ports.jobs === undefined) return { outcome: 'failed', reason: unavailable.jobs };
      return { outcome: 'started', handle: await ports.jobs.submit(effect.processor, effect.items, jobKey(origin), origin.owner) };
    }
  }
}

/** Runs the effect; what it sends is traced through `telemetry` (a span per message or call, its traceparent carried along). */
export async function runEffect(
  effect: Effect,
  origin: EffectOrigin,
  ports: EffectPorts,
  telemetry: Telemetry = noTelemetry,
): Promise<EffectOutcome> {
  try {
    return await send(effect, origin, ports, spansOf(telemetry));
  } catch (err) {
    if (err instanceof WebhookRefused) return { outcome: 'failed', reason: `refused: ${err.message}` };
    // DNS, connection, TLS, timeout: the resolver's text is the operator's (function-level views show the phrase).
    if (effect.type === 'webhook' && !isAppError(err)) return { outcome: 'failed', reason: storedReason(unreachable(err)) };
    if (effect.type !== 'webhook' && isTransient(err)) throw err;
    return { outcome: 'failed', reason: firstLine(err), ...(isAppError(err) ? { code: err.code } : {}) };
  }
}

/** Asks an effect that completes later (a job) how it is going. */
export async function pollEffect(
  effect: Effect,
  handle: string,
  ports: EffectPorts,
): Promise<EffectOutcome | { readonly outcome: 'running' }> {
  if (effect.type !== 'job') return { outcome: 'failed', reason: `a ${effect.type} run has nothing to poll` };
  if (ports.jobs === undefined) return { outcome: 'failed', reason: unavailable.jobs };
  try {
    const status = await ports.jobs.status(handle);
    if (status.state === 'running') return { outcome: 'running' };
    if (status.state === 'failed') return { outcome: 'failed', reason: status.reason };
    return { outcome: 'succeeded', ...(status.detail === undefined ? {} : { detail: status.detail }) };
  } catch (err) {
    if (isTransient(err)) throw err;
    return { outcome: 'failed', reason: firstLine(err) };
  }
}
