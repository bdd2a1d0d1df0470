/**
 * What every capability's part of a scale-out run has: a set-up, a load that runs until the run
 * says stop, a drain (the work the load started finishes), and a check of the final state — read
 * from storage, where it lives — against the history. The checks themselves are pure functions in
 * checks/, so a unit test can hand them a history with a violation in it.
 */
import type { HostKind } from './cluster';
import type { Capability, History, RecordingClient } from './history';
import type { RowWrite } from './storageTap';

/** One life of an instance: from a start to a kill, a stop, or the end of the run. */
export interface Life {
  readonly instance: number;
  readonly startedAt: number;
  readonly endedAt: number | undefined;
  readonly how: 'kill' | 'stop' | undefined;
  /** What it printed in this life. */
  readonly output: string;
}

export interface RunContext {
  readonly kind: HostKind;
  readonly client: RecordingClient;
  readonly history: History;
  /** Instance slots (some may be down at any moment). */
  readonly instances: number;
  readonly isUp: (instance: number) => boolean;
  readonly storage: string;
  readonly taskHub: string;
  /** How long the load runs. */
  readonly loadMs: number;
  /** Scales the amount of load (1 for the bounded run). */
  readonly scale: number;
  /** Aborted when the load phase ends. */
  readonly loadEnded: AbortSignal;
  say(message: string): void;
}

export interface Invariant {
  readonly name: string;
  /** Each a sentence naming what broke; empty when the invariant holds. */
  readonly violations: readonly string[];
  /** What was checked, for the report. */
  readonly figures: Readonly<Record<string, number | string>>;
}

export interface CheckReport {
  readonly capability: Capability;
  readonly invariants: readonly Invariant[];
}

export interface CheckInput {
  readonly history: History;
  /** Every instance life, in start order. */
  readonly lives: readonly Life[];
  /** Every successful write of a sequence row, in commit order, by instance (storageTap.ts). */
  readonly sequenceWrites: readonly RowWrite[];
}

export interface Workload {
  readonly capability: Capability;
  /** Settings this workload needs the instances to start with. */
  readonly settings?: Readonly<Record<string, string>>;
  setup(ctx: RunContext): Promise<void>;
  /** Runs until ctx.loadEnded aborts. */
  run(ctx: RunContext): Promise<void>;
  /** Lets the started work finish, until `deadline` (ms). Instances are still up. */
  drain(ctx: RunContext, deadline: number): Promise<void>;
  /** Reads the final state (every instance stopped by now) and checks it against the history. */
  check(ctx: RunContext, input: CheckInput): Promise<CheckReport>;
}

export function invariant(name: string, violations: readonly string[], figures: Record<string, number | string> = {}): Invariant {
  return { name, violations, figures };
}

/** A bounded list of violation sentences: the count and the first few. */
export function capped(violations: readonly string[], max = 20): string[] {
  return violations.length <= max ? [...violations] : [...violations.slice(0, max), `… and ${violations.length - max} more`];
}

export const randomInt = (lo: number, hi: number): number => lo + Math.floor(Math.random() * (hi - lo + 1));

/** Percentile of sorted numbers (nearest rank). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}
