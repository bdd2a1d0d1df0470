/**
 * What a gated run does once released: a subset of the app's effects (shared/effects), with the
 * gate's own API shape (the schema is in ./schemas.ts). A new kind of action is one more schema
 * member plus one case in `actionEffect`; its switch is exhaustive over `type`.
 *
 * - `none`: just proceed; the run completes as soon as it is released (the orchestrator needs no
 *   activity for it).
 * - `enqueue`: put a message for the run on the `gate-actions` storage queue, where pre-warmed
 *   workers that cannot hold an HTTP connection pick it up. At least once: a consumer dedups by `runId`.
 * - `job`: submit a job (the jobs API body) through the jobs service, under the run's effect key
 *   (`effectKey`), so a retried activity finds the job it submitted instead of submitting another.
 *
 * Pure types and functions: the run orchestrator imports this module.
 */
import type { Effect, JobItem, JsonValue } from '../effects/effect';
import { queues } from '../resources';

export type GateAction =
  | { readonly type: 'none' }
  | { readonly type: 'enqueue'; readonly payload?: JsonValue }
  | { readonly type: 'job'; readonly processor: string; readonly items: readonly JobItem[] };

/** What an action reports; stored in the run's output. */
export type GateActionResult =
  | { readonly type: 'none' }
  | { readonly type: 'enqueue'; readonly queue: string; readonly messageId: string }
  | { readonly type: 'job'; readonly jobId: string };

/** Whether the action needs an activity (I/O) or the orchestrator can finish on its own. */
export function needsActivity(action: GateAction): boolean {
  return action.type !== 'none';
}

/** The effect a released run's action makes; undefined for `none`. */
export function actionEffect(action: GateAction, run: { gate: string; generation: number; runId: string }): Effect | undefined {
  switch (action.type) {
    case 'none':
      return undefined;
    case 'enqueue':
      return { type: 'enqueue', queue: queues.gateActions, message: { ...run, payload: action.payload ?? null } };
    case 'job':
      return { type: 'job', processor: action.processor, items: action.items };
  }
}
