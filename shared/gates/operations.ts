/**
 * The gate entity's state and its operations, typed once. Inputs are validated with zod when the
 * entity receives them (anyone with the task hub's API could signal the entity), and every result
 * type is named, so the orchestrators read what the entity returns without casts.
 */
import { z } from 'zod';

type GateStatus = 'closed' | 'released';

/** How a release came about: an admin's API call or the generation's `releaseAt` schedule. */
export const releaseHows = ['api', 'schedule'] as const;
export type ReleaseHow = (typeof releaseHows)[number];

const isoTime = z.iso.datetime({ offset: true });
/** Who did it: the authenticated principal, a label the admin gave, or `admin`. */
export const actorSchema = z.string().min(1).max(128);
const noteSchema = z.string().max(500);
const waiterId = z.string().min(1).max(256);

export interface ReleaseInfo {
  readonly generation: number;
  readonly at: string;
  readonly by: string;
  readonly how: ReleaseHow;
  readonly note?: string;
}

/** Runs registered with a generation. `waiting` counts those still waiting (0 once released). */
interface WaiterCounts {
  readonly waiting: number;
  /** Registered before the release (including runs carried over from a reset of a closed gate). */
  readonly registered: number;
  /** Registered after the release: answered "already released" at once. */
  readonly late: number;
  /** Runs that reported proceeding after this generation's release. */
  readonly proceeded: number;
}

/** What every view of a gate has. */
interface GateFields {
  readonly name: string;
  readonly generation: number;
  readonly state: GateStatus;
  readonly createdAt: string;
  readonly generationStartedAt: string;
  readonly releaseAt: string | null;
  readonly release: ReleaseInfo | null;
}

/** What the entity stores. `waiting` holds the instance ids of the runs to push the release to. */
export interface GateRecord extends GateFields {
  readonly version: 1;
  readonly waiting: readonly string[];
  readonly counts: Omit<WaiterCounts, 'waiting'>;
}

/** The record as callers see it: the waiting list reduced to counts. */
export interface GateSnapshot extends GateFields {
  readonly waiters: WaiterCounts;
}

export const gateRecordSchema = z.object({
  version: z.literal(1),
  name: z.string(),
  generation: z.int().min(1),
  state: z.enum(['closed', 'released']),
  createdAt: isoTime,
  generationStartedAt: isoTime,
  releaseAt: isoTime.nullable(),
  release: z
    .object({
      generation: z.int().min(1),
      at: isoTime,
      by: z.string(),
      how: z.enum(releaseHows),
      note: z.string().optional(),
    })
    .nullable(),
  waiting: z.array(z.string()),
  counts: z.object({ registered: z.int().min(0), late: z.int().min(0), proceeded: z.int().min(0) }),
}) satisfies z.ZodType<GateRecord>;

export const operationInputs = {
  create: z.object({ name: z.string().min(1), at: isoTime, releaseAt: isoTime.nullable() }),
  register: z.object({ waiter: waiterId, maxWaiters: z.int().min(1) }),
  release: z.object({
    /** Absent: whatever generation is current (for callers that do not track generations, e.g. schedules). */
    generation: z.int().min(1).optional(),
    at: isoTime,
    by: actorSchema,
    how: z.enum(releaseHows),
    note: noteSchema.optional(),
  }),
  reset: z.object({ fromGeneration: z.int().min(1), at: isoTime, releaseAt: isoTime.nullable() }),
  proceeded: z.object({ generation: z.int().min(1), waiter: waiterId }),
} as const;

export type GateOperationName = keyof typeof operationInputs;
export type GateOperationInput<N extends GateOperationName> = z.output<(typeof operationInputs)[N]>;

export type CreateResult = { readonly created: boolean; readonly gate: GateSnapshot };

export type RegisterResult =
  | { readonly outcome: 'waiting'; readonly generation: number }
  | { readonly outcome: 'released'; readonly generation: number; readonly release: ReleaseInfo }
  | { readonly outcome: 'full'; readonly generation: number; readonly limit: number }
  | { readonly outcome: 'missing' };

export type ReleaseResult =
  | { readonly outcome: 'released'; readonly gate: GateSnapshot; readonly waiters: readonly string[] }
  | { readonly outcome: 'alreadyReleased' | 'superseded'; readonly gate: GateSnapshot }
  | { readonly outcome: 'missing' };

export type ResetResult =
  | { readonly outcome: 'reset'; readonly gate: GateSnapshot; readonly carried: number }
  | { readonly outcome: 'alreadyReset'; readonly gate: GateSnapshot }
  | { readonly outcome: 'missing' };

export function isGateOperation(name: string | undefined): name is GateOperationName {
  return name !== undefined && Object.hasOwn(operationInputs, name);
}
