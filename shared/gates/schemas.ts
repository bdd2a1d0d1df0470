/** The HTTP shapes of the gates API (request validation and the OpenAPI document). */
import * as z from 'zod';

import { acceptedSchema } from '../http/operation';
import { pageOf } from '../http/paging';
import { isoTimestamp, resourceName } from '../http/schemas';
import { submitBody } from '../jobs/http/schemas';
import type { GateAction, GateActionResult } from './actions';
import { actorSchema, type GateSnapshot, releaseHows } from './operations';

export const gateParams = z.object({ name: resourceName });

/** Storage queue messages are at most 64 KiB and are base64-encoded; keep the payload well below. */
export const maxActionPayloadBytes = 32 * 1024;

const payload = z
  .json()
  .refine((value) => Buffer.byteLength(JSON.stringify(value), 'utf8') <= maxActionPayloadBytes, {
    message: `At most ${maxActionPayloadBytes} bytes of JSON`,
  })
  .meta({ description: `Any JSON value (at most ${maxActionPayloadBytes} bytes), passed to the worker as is.` });

export const gateActionSchema: z.ZodType<GateAction> = z
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

export const gateActionResultSchema: z.ZodType<GateActionResult> = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('none') }),
    z.object({ type: z.literal('enqueue'), queue: z.string(), messageId: z.string() }),
    z.object({ type: z.literal('job'), jobId: z.string() }),
  ])
  .meta({ id: 'GateActionResult', description: 'What the action did: the message it enqueued, the job it submitted.' });

const note = z.string().max(500).meta({ description: 'Free text kept in the audit record.' });
const by = actorSchema.meta({
  description: 'Who is doing it, for the audit record. With App Service authentication on, the signed-in principal is recorded instead.',
});
const releaseAt = isoTimestamp.meta({
  description: 'Release this generation automatically at this time (ISO 8601 with offset; in the future, at most 366 days ahead).',
  example: '2026-03-29T09:00:00Z',
});

export const createBody = z
  .strictObject({ releaseAt: releaseAt.optional(), by: by.optional(), note: note.optional() })
  .optional()
  .meta({ id: 'GateCreateRequest' });

export const releaseBody = z.strictObject({ by: by.optional(), note: note.optional() }).optional().meta({ id: 'GateReleaseRequest' });

export const resetBody = z
  .strictObject({ releaseAt: releaseAt.optional(), by: by.optional(), note: note.optional() })
  .optional()
  .meta({ id: 'GateResetRequest' });

export const runBody = z
  .strictObject({
    runId: resourceName.optional().meta({
      description:
        'Makes the start idempotent: a second start with the same runId and action returns the first run (a different action is a 409). Default: a new id.',
    }),
    action: gateActionSchema.optional(),
  })
  .optional()
  .meta({ id: 'GateRunRequest', example: { action: { type: 'none' } } });

/** The ceiling is the hard limit; TALLYHO_GATES_WAIT_MAX_SECONDS may lower it. */
const hardWaitMaxSeconds = 220;

export const waitQuery = z.object({
  timeout: z.coerce
    .number()
    .int()
    .min(0)
    .max(hardWaitMaxSeconds)
    .optional()
    .meta({ description: 'Seconds to wait for the release (default 30, at most TALLYHO_GATES_WAIT_MAX_SECONDS).' }),
  generation: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .meta({ description: 'Wait for the release of this generation (returns at once if the gate has moved past it).' }),
});

const waiters = z
  .object({
    waiting: z.int().meta({ description: 'Runs waiting now (0 once released).' }),
    registered: z.int().meta({ description: 'Runs registered before the release (including those carried over by a reset).' }),
    late: z.int().meta({ description: 'Runs that registered after the release and proceeded at once.' }),
    proceeded: z
      .int()
      .meta({ description: "Runs this generation's release let go: every registered run at the release, every late one at once." }),
  })
  .meta({ id: 'GateWaiters' });

export const gateView = z
  .object({
    name: z.string(),
    state: z.enum(['closed', 'released']),
    generation: z.int().meta({ description: 'Increases with every reset; a release belongs to one generation.' }),
    createdAt: z.string(),
    generationStartedAt: z.string(),
    releaseAt: z.string().nullable(),
    releasedAt: z.string().nullable(),
    releasedBy: z.string().nullable(),
    releaseHow: z.enum(['api', 'schedule']).nullable(),
    releaseNote: z.string().nullable(),
    waiters,
  })
  .meta({ id: 'Gate' });

export type GateView = z.output<typeof gateView>;

export const gateList = pageOf(gateView, 'GateList', 'A page of gates in name order, each as its gate row holds it now.', {
  unreadable: true,
});

export function viewOf(gate: GateSnapshot): GateView {
  return {
    name: gate.name,
    state: gate.state,
    generation: gate.generation,
    createdAt: gate.createdAt,
    generationStartedAt: gate.generationStartedAt,
    releaseAt: gate.releaseAt,
    releasedAt: gate.release?.at ?? null,
    releasedBy: gate.release?.by ?? null,
    releaseHow: gate.release?.how ?? null,
    releaseNote: gate.release?.note ?? null,
    waiters: gate.waiters,
  };
}

export const releaseResult = z
  .object({ outcome: z.enum(['released', 'alreadyReleased']), gate: gateView })
  .meta({ id: 'GateReleaseResult' });

export const resetResult = z
  .object({
    outcome: z.enum(['reset', 'alreadyReset']),
    gate: gateView,
    carried: z.int().meta({ description: 'Runs still waiting that moved into the new generation.' }),
  })
  .meta({ id: 'GateResetResult' });

export const waitResult = z.object({ released: z.boolean(), timedOut: z.boolean(), gate: gateView }).meta({ id: 'GateWaitResult' });

export const runParams = z.object({ name: resourceName, runId: resourceName });

/** The run's own status route: what a run starter may follow (never a Durable management URL, which carries a system key). */
export function runStatusPath(gate: string, runId: string): string {
  return `/api/gates/${encodeURIComponent(gate)}/runs/${encodeURIComponent(runId)}`;
}

export const runStarted = acceptedSchema(
  z.object({
    runId: z.string(),
    gate: z.string(),
    created: z.boolean(),
    id: z.string().meta({ description: 'The run as the app names it (`gate:<gate>:run:<runId>`).' }),
  }),
  'GateRunStarted',
  "The run id and where to follow it: `statusUri` is the run's status route (GET, function key).",
);

export const runState = z
  .object({
    runId: z.string(),
    gate: z.string(),
    id: z.string(),
    state: z.enum(['waiting', 'proceeded', 'failed']).meta({
      description: '`waiting` for the release; `proceeded` once released (its action, if any, then runs); `failed` when its action failed.',
    }),
    generation: z.int().meta({ description: 'Waiting: the generation it waits on. Otherwise: the generation whose release let it go.' }),
    late: z.boolean().meta({ description: 'Registered after the release, and proceeded at once.' }),
    registeredAt: z.string(),
    proceededAt: z.string().nullable().meta({ description: 'The release (or, for a late run, its registration); null while waiting.' }),
    release: z
      .object({ generation: z.int(), at: z.string(), by: z.string(), how: z.enum(releaseHows), note: z.string().optional() })
      .nullable()
      .meta({ description: 'The release that let it go.' }),
    action: gateActionResultSchema.nullable().meta({ description: 'What its action did, once it did; null before.' }),
    actionAt: z.string().nullable().meta({ description: 'When its action was done (or failed).' }),
    failure: z
      .object({ code: z.string(), reason: z.string() })
      .optional()
      .meta({ description: 'Only when `failed`: the problem code and what went wrong.' }),
  })
  .meta({ id: 'GateRun' });
