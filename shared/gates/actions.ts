/**
 * What a gated run does once released: a subset of the app's effects (shared/effects), with the
 * gate's own API shape (the schema is in ./schemas.ts). A new kind of action is one more schema
 * member plus one case in `actionEffect`; its switch is exhaustive over `type`.
 *
 * - `none`: just proceed; the run has proceeded the moment the gate is released (nothing is
 *   written for it then: its state is derived from the gate's).
 * - `enqueue`: put a message for the run on the `gate-actions` storage queue, where pre-warmed
 *   workers that cannot hold an HTTP connection pick it up. At least once: a consumer dedups by `runId`.
 * - `job`: submit a job (the jobs API body) through the jobs service, under the run's effect key
 *   (`effectKey`), so a repeated attempt finds the job it submitted instead of submitting another.
 */
import type { Effect, JobItem, JsonValue } from '../effects/effect';
import { queues } from '../resources';

export type GateAction =
  | { readonly type: 'none' }
  | { readonly type: 'enqueue'; readonly payload?: JsonValue }
  | { readonly type: 'job'; readonly processor: string; readonly items: readonly JobItem[] };

export type GateActionType = GateAction['type'];
export const gateActionTypes = ['none', 'enqueue', 'job'] as const satisfies readonly GateActionType[];

/** What an action reports; stored with the run. */
export type GateActionResult =
  | { readonly type: 'none' }
  | { readonly type: 'enqueue'; readonly queue: string; readonly messageId: string }
  | { readonly type: 'job'; readonly jobId: string };

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
