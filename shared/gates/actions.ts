/**
 * What a gated run does once released. A discriminated union, so a new kind of action is one more
 * schema member plus one case in activities.ts (its switch is exhaustive over `type`, so a new kind
 * does not compile until it is handled).
 *
 * - `none`: just proceed; the run completes as soon as it is released (the orchestrator needs no
 *   activity for it).
 * - `enqueue`: put a message for the run on the `gate-actions` storage queue, where pre-warmed
 *   workers that cannot hold an HTTP connection pick it up. At least once: a consumer dedups by `runId`.
 * - `job`: submit a job (the jobs API body) through the jobs service. The submission's
 *   Idempotency-Key is derived from the run, so a retried activity finds the job it submitted
 *   instead of submitting another.
 */
import { z } from 'zod';

import { submitBody } from '../jobs/schemas';

/** Storage queue messages are at most 64 KiB and are base64-encoded; keep the payload well below. */
export const maxActionPayloadBytes = 32 * 1024;

const payload = z
  .json()
  .refine((value) => Buffer.byteLength(JSON.stringify(value), 'utf8') <= maxActionPayloadBytes, {
    message: `At most ${maxActionPayloadBytes} bytes of JSON`,
  })
  .meta({ description: `Any JSON value (at most ${maxActionPayloadBytes} bytes), passed to the worker as is.` });

export const gateActionSchema = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('none') }).meta({ description: 'Proceed; nothing else.' }),
    z
      .strictObject({ type: z.literal('enqueue'), payload: payload.optional() })
      .meta({ description: 'Enqueue a message {gate, generation, runId, payload} on the gate-actions storage queue.' }),
    // The jobs API's own fields, so a job action is refused for exactly what POST /api/jobs refuses;
    // the setting-bound limits (TALLYHO_JOBS_MAX_ITEMS …) are checked when the run is started.
    z
      .strictObject({ type: z.literal('job'), processor: submitBody.shape.processor, items: submitBody.shape.items })
      .meta({ description: 'Submit a job (the POST /api/jobs body) once released; the run records its id.' }),
  ])
  .meta({ id: 'GateAction', description: 'What the run does once the gate is released (default: none).' });

export type GateAction = z.output<typeof gateActionSchema>;
export type GateActionType = GateAction['type'];

/** What an action reports; stored in the run's output. */
export type GateActionResult =
  | { readonly type: 'none' }
  | { readonly type: 'enqueue'; readonly queue: string; readonly messageId: string }
  | { readonly type: 'job'; readonly jobId: string };

/**
 * The Idempotency-Key of a run's job submission. A run id is unique within its gate (a second start
 * with the same runId returns the first run), so gate and run id name one submission; the prefix
 * keeps it apart from keys clients and schedules choose.
 */
export function jobActionKey(gate: string, runId: string): string {
  return `gate-run:${gate}:${runId}`;
}

/** Whether the action needs an activity (I/O) or the orchestrator can finish on its own. */
export function needsActivity(action: GateAction): boolean {
  return action.type !== 'none';
}
