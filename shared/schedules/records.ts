/**
 * What the orchestration, its activities and the index exchange: run records, the control snapshot
 * read from the index, run outcomes and the engine settings an orchestration runs with.
 */
import type { Fire, FireKind } from './policies';

/** Settings an orchestration needs; it cannot read the config itself, so activities hand them over. */
export interface EngineSettings {
  /** A fire older than this when the schedule looks at it counts as missed (catch-up policy). */
  readonly graceMs: number;
  /** Runs in progress at once under the `allow` overlap policy. */
  readonly maxConcurrentRuns: number;
  /** How often a run that completes later (a job) is polled. */
  readonly pollMs: number;
  /** Longest sleep before the index is read again (heals a lost wake-up event). */
  readonly recheckMs: number;
  /** How often the index is read while a run outlives the wait it was started in. */
  readonly runCheckMs: number;
}

export type ScheduleStatus = 'pending' | 'active' | 'paused' | 'cancelled' | 'completed';

export interface TriggerRequest {
  readonly id: string;
  readonly requestedAt: string;
  /** The W3C traceparent of the request that asked for it: the run continues that trace. */
  readonly traceparent?: string;
}

/** How a run ended (or, for a job, that it started), as the index remembers it for the orchestration. */
export interface SettledRun {
  readonly runId: string;
  readonly outcome: 'succeeded' | 'failed' | 'refused' | 'started';
  readonly handle?: string;
}

/** The index's control state, which is the truth for pause, resume, cancel and trigger. */
export interface ControlSnapshot {
  readonly state: Exclude<ScheduleStatus, 'pending'>;
  readonly triggers: readonly TriggerRequest[];
  readonly controlVersion: number;
  readonly settings: EngineSettings;
  /** The newest settled runs (a bounded ring), newest last. */
  readonly settled: readonly SettledRun[];
}

type RunOutcomeKind = 'running' | 'succeeded' | 'failed' | 'skipped' | 'missed';

/** One line of a schedule's run history. Skips and misses of many fires are one line with a count. */
export interface RunRecord {
  readonly runId?: string;
  /** When the fire was due (a trigger: when it was requested). */
  readonly at: string;
  readonly kind: FireKind;
  readonly outcome: RunOutcomeKind;
  /** Why it was skipped, missed or failed. */
  readonly reason?: string;
  readonly count?: number;
  readonly triggerId?: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  /** What the target answered (a webhook status, a message id, a Service Bus sequence number). */
  readonly detail?: string;
}

/**
 * How late a fire ran, in seconds: from when it was due to its run starting (never negative). A
 * trigger is not late (it is due when requested). The run activity records it (tallyho.schedule.lateness)
 * and the figures route reads it back from the run history.
 */
export function latenessSeconds(fire: { readonly at: string; readonly kind: FireKind }, startedAt: string): number | undefined {
  if (fire.kind === 'trigger') return undefined;
  return Math.max(0, Date.parse(startedAt) - Date.parse(fire.at)) / 1000;
}

export type RunOutcome =
  | { readonly outcome: 'succeeded'; readonly detail?: string; readonly snapshot?: ControlSnapshot }
  | { readonly outcome: 'failed'; readonly reason: string; readonly snapshot?: ControlSnapshot }
  /** The index was paused or cancelled before the run could be claimed: nothing ran. */
  | { readonly outcome: 'refused'; readonly snapshot: ControlSnapshot }
  /** The target accepted work that completes later (a job); poll `handle`. */
  | { readonly outcome: 'started'; readonly handle: string; readonly snapshot?: ControlSnapshot }
  /** A poll found the work still going. */
  | { readonly outcome: 'running'; readonly snapshot?: ControlSnapshot };

export interface RunInput {
  readonly scheduleId: string;
  readonly runId: string;
  readonly fire: Fire;
  /** The orchestration's time when it started the run. */
  readonly now: string;
  /** The next scheduled fire, written to the index with the claim. */
  readonly nextFireAt: string | null;
}

export interface PollInput {
  readonly scheduleId: string;
  readonly runId: string;
  readonly handle: string;
  readonly now: string;
}

export interface CheckpointInput {
  readonly scheduleId: string;
  readonly now: string;
  readonly nextFireAt: string | null;
  readonly records: readonly RunRecord[];
  /** Runs whose activity failed for good (the target outcome is unknown). */
  readonly lostRuns?: readonly { readonly runId: string; readonly reason: string }[];
  readonly final?: 'completed' | 'cancelled';
}
