/**
 * The gate's state, typed once: the gate record (one table row per gate, changed only by conditional
 * writes), the runs registered with it, the release records, and what each state rule answers.
 * Stored rows are parsed with zod when read back (rows.ts), so a row written by another version or by
 * hand is refused by name rather than misread.
 */
import * as z from 'zod';

import type { GateActionResult, GateActionType } from './actions';

type GateStatus = 'closed' | 'released';

/** What the audit log records. */
export const auditKinds = ['create', 'release', 'reset'] as const;
export type AuditKind = (typeof auditKinds)[number];

/** How a release came about: an admin's API call or the generation's `releaseAt` schedule. */
export const releaseHows = ['api', 'schedule'] as const;
export type ReleaseHow = (typeof releaseHows)[number];

export const isoTime = z.iso.datetime({ offset: true });
/** Who did it: the authenticated principal, a label the admin gave, or `admin`. */
export const actorSchema = z.string().min(1).max(128);

export interface ReleaseInfo {
  readonly generation: number;
  readonly at: string;
  readonly by: string;
  readonly how: ReleaseHow;
  readonly note?: string;
}

export const releaseInfoSchema = z.object({
  generation: z.int().min(1),
  at: isoTime,
  by: z.string(),
  how: z.enum(releaseHows),
  note: z.string().optional(),
}) satisfies z.ZodType<ReleaseInfo>;

/** Runs registered with a generation. `waiting` counts those still waiting (0 once released). */
interface WaiterCounts {
  readonly waiting: number;
  /** Registered before the release (including runs carried over from a reset of a closed gate). */
  readonly registered: number;
  /** Registered after the release: answered "already released" at once. */
  readonly late: number;
  /** Runs let go by this generation's release: every registered run at the release, every late one at once. */
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

/** What the gate row counts: `proceeded` is derived, and the waiting runs with an action are what a release fans out. */
interface StoredCounts {
  readonly waiting: number;
  readonly registered: number;
  readonly late: number;
  /** Waiting runs that have an action to perform once released. */
  readonly actionsWaiting: number;
}

/** The gate row. */
export interface GateRecord extends GateFields {
  readonly version: 2;
  /**
   * The first generation of the current run of closed generations: runs registered from it on are
   * still waiting (a reset of a closed gate carries them), and its release lets all of them go.
   */
  readonly openSince: number;
  readonly counts: StoredCounts;
}

/** The record as callers see it. */
export interface GateSnapshot extends GateFields {
  readonly waiters: WaiterCounts;
}

/** A release of one generation, kept for runs that read their state after the gate moved on. */
export interface ReleaseRecord extends ReleaseInfo {
  /** The first generation whose runs this release let go (the generations in between were reset while closed). */
  readonly from: number;
  /** Runs with an action it let go: what its fan-out performs. */
  readonly actions: number;
}

/** What an action came to, recorded once by whoever performed it (a conditional write). */
export type ActionOutcome =
  | { readonly state: 'done'; readonly at: string; readonly result: GateActionResult }
  | { readonly state: 'failed'; readonly at: string; readonly code: string; readonly reason: string };

/** A registered run (one table row in the gate's partition). */
export interface RunRecord {
  readonly gate: string;
  readonly runId: string;
  /** The generation that was current when the run registered. */
  readonly generation: number;
  /** Registered after that generation's release. */
  readonly late: boolean;
  readonly registeredAt: string;
  /** SHA-256 of the action (canonical JSON): a second start with the same runId must bring the same action. */
  readonly fingerprint: string;
  readonly actionType: GateActionType;
  /** Who started it (a Caller id, shared/ownership.ts); absent on runs registered before owners were recorded. */
  readonly owner?: string;
  /** Undefined while an action is still to be performed (and always for `none`). */
  readonly outcome: ActionOutcome | undefined;
}

export interface CreateInput {
  readonly name: string;
  readonly at: string;
  readonly releaseAt: string | null;
}

export interface ReleaseInput {
  /** Absent: whatever generation is current (for callers that do not track generations). */
  readonly generation?: number;
  readonly at: string;
  readonly by: string;
  readonly how: ReleaseHow;
  readonly note?: string;
}

export interface ResetInput {
  readonly fromGeneration: number;
  readonly at: string;
  readonly releaseAt: string | null;
}

export interface AdmitInput {
  /** Whether each run to admit has an action, in arrival order. */
  readonly withAction: readonly boolean[];
  readonly maxWaiters: number;
}

export type CreateResult = { readonly created: boolean; readonly gate: GateSnapshot };

export type AdmitResult =
  | { readonly outcome: 'missing' }
  /** The first `accepted` runs wait for the release of `generation`; the rest would exceed the limit. */
  | { readonly outcome: 'waiting'; readonly generation: number; readonly accepted: number; readonly limit: number }
  /** Every run registers late and proceeds at once with `release`. */
  | { readonly outcome: 'late'; readonly generation: number; readonly accepted: number; readonly release: ReleaseInfo };

export type ReleaseResult =
  | { readonly outcome: 'released'; readonly gate: GateSnapshot; readonly release: ReleaseRecord }
  | { readonly outcome: 'alreadyReleased' | 'superseded'; readonly gate: GateSnapshot }
  | { readonly outcome: 'missing' };

export type ResetResult =
  | { readonly outcome: 'reset'; readonly gate: GateSnapshot; readonly carried: number }
  | { readonly outcome: 'alreadyReset'; readonly gate: GateSnapshot }
  | { readonly outcome: 'missing' };

/** A run's state as its status route tells it. */
export type RunState =
  | { readonly state: 'waiting'; readonly generation: number }
  | { readonly state: 'proceeded' | 'failed'; readonly generation: number; readonly release: ReleaseInfo; readonly proceededAt: string };

/** Who changes a gate (an admin's name, a schedule), with a note. */
export interface Actor {
  readonly by: string;
  readonly note?: string;
}

export type CreateOutcome = { readonly created: boolean; readonly gate: GateSnapshot };
export type ReleaseOutcome = { readonly outcome: 'released' | 'alreadyReleased'; readonly gate: GateSnapshot };
export type ResetOutcome = { readonly outcome: 'reset' | 'alreadyReset'; readonly gate: GateSnapshot; readonly carried: number };

export interface RunStart {
  readonly runId: string;
  readonly instanceId: string;
  readonly created: boolean;
}
