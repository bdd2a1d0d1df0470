/**
 * What a capability can make happen when something fires — a released gate run, a schedule's run:
 * one union for all of them. The API shapes that ask for an effect (a gate's `action`, a schedule's
 * `target`) are each capability's own and stay as documented; each turns into an Effect, which is
 * validated (./admission.ts), keyed (`effectKey`) and run (./runner.ts) the same way whoever fires it.
 * A gate run accepts a subset (none, enqueue, job), a schedule all of them.
 *
 * Pure types and functions only: orchestrations import this module.
 */
import type { AppErrorCode } from '../errors';
import { appKey } from '../names';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A job item as the jobs capability takes it: an object with an `id` unique within the job. */
export type JobItem = { readonly id: string } & Readonly<Record<string, unknown>>;

export type Effect =
  /** Put `message` on a storage queue (base64-encoded, as Functions queue triggers expect). */
  | { readonly type: 'enqueue'; readonly queue: string; readonly message: JsonValue }
  /** Send `message` to a Service Bus queue or topic. */
  | { readonly type: 'serviceBus'; readonly entity: string; readonly message: JsonValue; readonly sessionId?: string }
  /** Submit a job (the jobs API body); the effect lasts until the job has finished. */
  | { readonly type: 'job'; readonly processor: string; readonly items: readonly JobItem[] }
  /** POST to an allow-listed HTTPS URL. */
  | { readonly type: 'webhook'; readonly url: string; readonly payload?: JsonValue }
  /** Release a gate (idempotent). */
  | { readonly type: 'gateRelease'; readonly gate: string };

/**
 * How an effect went. `failed` is an outcome of the effect itself (a webhook answering 500, a refused
 * URL, a capability that is not there) and is recorded; failures of the app's own plumbing that a
 * retry may fix are thrown instead, so the activity running the effect is retried.
 */
/** A storage queue message sent: the queue and the message id (a gate run's action reports them). */
export interface Queued {
  readonly queue: string;
  readonly messageId: string;
}

export type EffectOutcome =
  | { readonly outcome: 'succeeded'; readonly detail?: string; readonly queued?: Queued }
  /** `code`: the AppError's, when the failure was one (its message is then the reason, fit for callers). */
  | { readonly outcome: 'failed'; readonly reason: string; readonly code?: AppErrorCode }
  /** It completes later (a job): poll it by `handle`. */
  | { readonly outcome: 'started'; readonly handle: string };

/** What fired the effect. Everything the effect sends carries it, so a consumer can deduplicate a repeat. */
export type EffectOrigin =
  | {
      readonly kind: 'gateRun';
      readonly gate: string;
      readonly generation: number;
      readonly runId: string;
      /** Who started the run (a Caller id): a job it submits is theirs. */
      readonly owner?: string;
    }
  | {
      readonly kind: 'scheduleRun';
      readonly scheduleId: string;
      /** `<schedule id>#<n>`, numbered by the app. */
      readonly runId: string;
      /** The fire's due time and kind (`scheduled`, `catchUp`, `trigger`). */
      readonly scheduledFor: string;
      readonly fireKind: string;
      /** Says, in the gate's audit, who created the schedule. */
      readonly createdBy: string;
      /** Who owns the schedule (a Caller id): a job it submits is theirs. */
      readonly owner?: string;
    };

/**
 * What consumers deduplicate an effect by (the Service Bus `messageId`; enqueued messages and webhook
 * payloads carry the origin too): a gate run's id is unique only within its gate, so it names the
 * gate; a schedule run's id (`<schedule>#<n>`) is unique in the app and is used as it is.
 */
export function effectKey(origin: EffectOrigin): string {
  switch (origin.kind) {
    case 'gateRun':
      return `gate-run:${origin.gate}:${origin.runId}`;
    case 'scheduleRun':
      return origin.runId;
  }
}

/**
 * The Idempotency-Key of the job an effect submits, so a retried run finds the job it submitted.
 * It is in the app's own key form (shared/names.ts `appKey`, with a space), which no caller's
 * Idempotency-Key can take: a caller who sent the run's key first would otherwise own its job, or
 * make its submission a 409 for good.
 */
export function jobKey(origin: EffectOrigin): string {
  switch (origin.kind) {
    case 'gateRun':
      return appKey('gate-run', origin.gate, origin.runId);
    case 'scheduleRun':
      return appKey('schedule-run', origin.runId);
  }
}
