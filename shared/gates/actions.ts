/**
 * What a gated run does once released. A discriminated union, so a new kind of action is one more
 * schema member plus one case in actionRunner.ts (its switch is exhaustive over `type`, so a new kind
 * does not compile until it is handled).
 *
 * - `none`: just proceed; the run has proceeded the moment the gate is released (nothing is
 *   written for it then: its state is derived from the gate's).
 * - `enqueue`: put a message for the run on the `gate-actions` storage queue, where pre-warmed
 *   workers that cannot hold an HTTP connection pick it up. At least once: a consumer dedups by `runId`.
 * - `job`: submit a job (the jobs API body) through the jobs service. The submission's
 *   Idempotency-Key is derived from the run, so a repeated attempt finds the job it submitted
 *   instead of submitting another.
 */
import { createHash } from 'node:crypto';

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
export const gateActionTypes = ['none', 'enqueue', 'job'] as const satisfies readonly GateActionType[];

export const gateActionResultSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('none') }),
    z.object({ type: z.literal('enqueue'), queue: z.string(), messageId: z.string() }),
    z.object({ type: z.literal('job'), jobId: z.string() }),
  ])
  .meta({ id: 'GateActionResult', description: 'What the action did: the message it enqueued, the job it submitted.' });

/** What an action reports; stored with the run. */
export type GateActionResult = z.output<typeof gateActionResultSchema>;

/** JSON with object keys sorted, so equal actions have equal text whatever order their fields came in. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The action's fingerprint: a second start of a run id must bring the same action, or it is refused
 * (409) — a caller who learns another's run id cannot swap the action that runs.
 */
export function actionFingerprint(action: GateAction): string {
  return createHash('sha256').update(canonicalJson(action)).digest('base64url');
}

/**
 * The Idempotency-Key of a run's job submission. A run id is unique within its gate (a second start
 * with the same runId and action returns the first run), so gate and run id name one submission; the
 * prefix keeps it apart from keys clients and schedules choose.
 */
export function jobActionKey(gate: string, runId: string): string {
  return `gate-run:${gate}:${runId}`;
}
