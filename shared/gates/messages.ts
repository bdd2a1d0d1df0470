/**
 * What the gate's orchestrations and activities pass each other. Durable does what must survive a
 * crash after a gate changed: publishing the change, performing released runs' actions, a scheduled
 * release. Each is started before the change is committed, so a crash in between leaves the work
 * with Durable (which finds the change, or finds it never happened) rather than with nobody.
 */
import type { AuditKind, GateSnapshot, ReleaseHow, ReleaseRecord } from './operations';

/** A release and what follows it (orchestration `gateRelease`, one per gate and generation). */
export interface ReleaseFollowUp {
  readonly gate: string;
  readonly generation: number;
  /** The release as the caller made it: if the caller's own write never landed, the orchestration makes it. */
  readonly at: string;
  readonly by: string;
  readonly how: ReleaseHow;
  readonly note?: string;
  /** Publish it on the Service Bus topic. */
  readonly announce: boolean;
  /** Waiting runs with an action the release lets go (as the caller read the gate), and the first generation it lets go. */
  readonly actions: number;
  readonly from: number;
  /** Runs per action batch (TALLYHO_GATES_NOTIFY_BATCH). */
  readonly batchSize: number;
  /** The release's W3C traceparent: the action batches continue its trace. */
  readonly trace?: string;
  /**
   * The caller fans the actions out itself once the release is written (fanOut.ts), under a lease of
   * this length renewed while it works: the batches sweep what is left once it ended or lapsed.
   */
  readonly fanOutLeaseSeconds?: number;
  /**
   * Orchestrations started before the lease: the caller fans out, and the batches wait this long and
   * then sweep. Neither field (through the Durable API): the batches start at once.
   */
  readonly sweepAfterSeconds?: number;
}

/** Which release's fan-out the `gateFanOutState` activity looks at. */
export interface FanOutStateInput {
  readonly gate: string;
  readonly generation: number;
}

/**
 * How the releasing instance's fan-out stands, on the activity's clock: `running` for `seconds` more
 * unless renewed; `ended`, cleanly (nothing left for a sweep to do) or not; `none` when no lease was
 * written (the release was made by the orchestration, or not yet) or it lapsed (its instance died).
 */
export type FanOutState =
  | { readonly state: 'running'; readonly seconds: number }
  | { readonly state: 'ended'; readonly clean: boolean }
  | { readonly state: 'none' };

/** What the release orchestration's first step found: the release made (by the caller or by it), or none. */
export type ReleaseConfirmed =
  | { readonly outcome: 'released'; readonly gate: GateSnapshot; readonly release: ReleaseRecord; readonly actions: number }
  | { readonly outcome: 'superseded' | 'missing' };

export interface ReleaseOutput {
  readonly outcome: ReleaseConfirmed['outcome'];
  readonly actions?: ActionsOutput;
}

/** Late joiners with actions (orchestration `gateLateActions`, started before they are committed). */
export interface LateActionsInput {
  readonly gate: string;
  readonly generation: number;
  readonly runIds: readonly string[];
}

export interface ActionsOutput {
  readonly done: number;
  readonly failed: number;
  /** Late runs that never registered (their start failed after the orchestration was started). */
  readonly abandoned: number;
}

/** Which runs a batch covers: a release's fan-out (shards of the runs it let go) or named late joiners. */
type ActionSelection =
  | { readonly kind: 'released'; readonly shards: readonly [number, number]; readonly from: number }
  | { readonly kind: 'late'; readonly runIds: readonly string[] };

export interface ActionBatchInput {
  readonly gate: string;
  /** The generation whose release let the runs go (what an `enqueue` message names). */
  readonly generation: number;
  readonly selection: ActionSelection;
  /**
   * The release to make (or find) first: a fan-out's first batches carry it, so the release is made
   * even if its caller died before writing it, without a step of its own before the actions.
   */
  readonly confirm?: ReleaseFollowUp;
  /** Record every pending run of the selection as failed with this reason instead of trying again. */
  readonly giveUp?: { readonly code: string; readonly reason: string };
  /** The release's traceparent, which the batch's span continues. */
  readonly trace?: string;
}

export interface ActionBatchResult {
  /** Outcomes this batch recorded. */
  readonly done: number;
  readonly failed: number;
  /** Runs left pending after a failure a retry may cure. */
  readonly retry: number;
  /** Late runs named that are not (yet) registered. */
  readonly missing: readonly string[];
  /** The last retryable failure, for the reason recorded if the orchestration gives up. */
  readonly lastError?: { readonly code: string; readonly reason: string };
}

/** A generation opened by a create or reset, and what follows (orchestration `gateGeneration`). */
export interface GenerationFollowUp {
  readonly gate: string;
  readonly kind: 'create' | 'reset';
  readonly generation: number;
  readonly releaseAt: string | null;
  readonly by: string;
  readonly note?: string;
  readonly announce: boolean;
  readonly batchSize: number;
}

export interface GenerationOutput {
  readonly opened: 'opened' | 'other' | 'abandoned';
  readonly schedule?: 'cancelled' | 'fired';
  readonly release?: string;
}

export interface OpenedInput {
  readonly gate: string;
  readonly kind: 'create' | 'reset';
  readonly generation: number;
  readonly releaseAt: string | null;
}

export interface OpenedResult {
  readonly opened: 'opened' | 'other' | 'absent';
  /** The gate now, for the announcement (when opened). */
  readonly gate?: GateSnapshot;
}

export interface ScheduledReleaseInput {
  readonly gate: string;
  readonly generation: number;
  readonly by: string;
  /** When the schedule fired (the orchestration's time): the release's time. */
  readonly at: string;
}

export interface AnnounceInput {
  readonly kind: AuditKind;
  readonly gate: GateSnapshot;
  readonly by: string;
  readonly how: ReleaseHow;
  readonly note?: string;
}

export interface AnnounceResult {
  readonly published: 'published' | 'notConfigured' | 'failed';
}
