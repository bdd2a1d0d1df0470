/**
 * What the gate's orchestrations and activities pass each other: inputs, outputs, custom statuses and
 * the release event. Inputs come from our own HTTP code, but the release event can be raised by anyone
 * with the task hub's API, so the run validates it.
 */
import { z } from 'zod';

import type { GateAction, GateActionResult } from './actions';
import { type GateSnapshot, type ReleaseHow, type ReleaseInfo, releaseHows, type ReleaseResult } from './operations';

const releaseInfoSchema = z.object({
  generation: z.int().min(1),
  at: z.string(),
  by: z.string(),
  how: z.enum(releaseHows),
  note: z.string().optional(),
}) satisfies z.ZodType<ReleaseInfo>;

/**
 * Pushed to every run registered with the released generation. `trace`: the release call's W3C
 * traceparent, which the run's action continues (an event raised by anyone else may carry any text
 * there; it is only ever read as a trace context, and a malformed one is ignored).
 */
export const gateReleasedEventSchema = z.object({
  gate: z.string(),
  generation: z.int().min(1),
  release: releaseInfoSchema,
  trace: z.string().max(64).optional(),
});
export type GateReleasedEvent = z.output<typeof gateReleasedEventSchema>;

export interface RunInput {
  readonly gate: string;
  readonly runId: string;
  readonly action: GateAction;
  /** TALLYHO_GATES_MAX_WAITERS, passed in because orchestrators read no settings. */
  readonly maxWaiters: number;
}

type RunPhase = 'registering' | 'waiting' | 'proceeding';

export interface RunStatus {
  readonly phase: RunPhase;
  readonly generation?: number;
}

export interface RunOutput {
  readonly gate: string;
  readonly runId: string;
  /** The generation whose release let the run proceed. */
  readonly generation: number;
  /** Registered after the release (answered at once) rather than pushed the release. */
  readonly late: boolean;
  readonly release: ReleaseInfo;
  readonly registeredAt: string;
  readonly proceededAt: string;
  readonly action: GateActionResult;
}

export interface ReleaseInput {
  readonly gate: string;
  /** The generation to release; absent releases the current one. */
  readonly generation?: number;
  readonly by: string;
  readonly how: ReleaseHow;
  readonly note?: string;
  /** Runs per notify activity (TALLYHO_GATES_NOTIFY_BATCH); default `defaultNotifyBatchSize`. */
  readonly notifyBatchSize?: number;
  /** The release call's traceparent, carried to the runs with the release event. */
  readonly trace?: string;
}

export const defaultNotifyBatchSize = 50;

/** The release orchestration's custom status, set as soon as the entity has decided. */
export type ReleaseStatus = Exclude<ReleaseResult, { outcome: 'released' }> | { readonly outcome: 'released'; readonly gate: GateSnapshot };

export interface ReleaseOutput {
  readonly result: ReleaseStatus;
  /** Runs the release was pushed to (only for the call that released). */
  readonly pushed: number;
  /** Of those, runs that no longer existed or had already finished. */
  readonly gone: number;
}

type GenerationKind = 'create' | 'reset';

export interface GenerationInput {
  readonly gate: string;
  readonly kind: GenerationKind;
  /** For a reset: the generation being replaced. */
  readonly fromGeneration?: number;
  readonly by: string;
  readonly note?: string;
  readonly releaseAt: string | null;
  readonly notifyBatchSize: number;
}

type GenerationOutcome = 'created' | 'exists' | 'reset' | 'alreadyReset' | 'missing';

/** The generation orchestration's custom status: what opening the generation did, then the scheduled release. */
export interface GenerationStatus {
  readonly opened: { readonly outcome: GenerationOutcome; readonly gate?: GateSnapshot; readonly carried?: number };
  readonly schedule?: 'waiting' | 'cancelled' | 'fired';
  readonly release?: ReleaseStatus;
}

export interface NotifyInput {
  readonly event: GateReleasedEvent;
  readonly waiters: readonly string[];
}

export interface NotifyResult {
  readonly delivered: number;
  readonly gone: number;
}

export type AnnounceKind = 'create' | 'release' | 'reset';

export interface AnnounceInput {
  readonly kind: AnnounceKind;
  readonly gate: GateSnapshot;
  readonly by: string;
  readonly how: ReleaseHow;
  readonly note?: string;
}

export interface AnnounceResult {
  readonly audited: boolean;
  readonly published: 'published' | 'notConfigured' | 'failed';
}

export interface ActionInput {
  readonly gate: string;
  readonly generation: number;
  readonly runId: string;
  readonly action: GateAction;
  /** The releasing call's traceparent (from the release event), which the action's span continues. */
  readonly trace?: string;
}
