/**
 * The schedule orchestration's activities: all of its I/O. Each is safe to retry: a run is claimed
 * in the index under its run id (a retry finds its own claim), and checkpoints are merges.
 *
 * The claim is where a fire and a cancel meet: both are conditional writes on the same row, so
 * either the run is claimed first (and a cancel of a one-off answers 409) or the cancel is (and the
 * claim is refused: the target never runs).
 *
 * A little over 300 lines: the activities share the claim and checkpoint rules above, kept in one place.
 */
import type { Clock, Random } from '../clock';
import type { EffectPorts } from '../effects/runner';
import type { Logger } from '../log';
import { type BackoffPolicy, retryLostRaces, retryContextOf } from '../retry';
import {
  type CheckpointInput,
  type ControlSnapshot,
  type EngineSettings,
  latenessSeconds,
  type PollInput,
  type RunInput,
  type RunOutcome,
  type RunRecord,
  type SettledRun,
} from './records';
import type { NewScheduleRow, ScheduleRow, ScheduleTable } from './scheduleTable';
import type { ScheduleSettings } from './settings';
import { pollTarget, runTarget, type TargetOutcome } from './targets';
import { scheduleTelemetry } from './metrics';
import { noTelemetry, type Telemetry } from '../telemetry/port';

export interface ActivityDeps {
  readonly table: ScheduleTable;
  /** What targets run with, bound to the Durable client of the activity's invocation (a gate release needs it). */
  readonly effects: EffectPorts;
  readonly settings: ScheduleSettings;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly backoff: BackoffPolicy;
  /** Where the capability's metrics and spans go (none when absent). */
  readonly telemetry?: Telemetry;
}

export function engineSettings(settings: ScheduleSettings): EngineSettings {
  return {
    graceMs: settings.misfireGraceSeconds * 1000,
    maxConcurrentRuns: settings.maxConcurrentRuns,
    pollMs: settings.pollSeconds * 1000,
    recheckMs: settings.recheckSeconds * 1000,
    runCheckMs: settings.runCheckMs,
  };
}

function snapshotOf(row: ScheduleRow | undefined, settings: ScheduleSettings): ControlSnapshot {
  // A row that is gone (or never became a schedule) stops its orchestration.
  const state = row === undefined ? 'cancelled' : row.state === 'pending' ? 'active' : row.state;
  return {
    state,
    triggers: row?.triggers ?? [],
    controlVersion: row?.controlVersion ?? 0,
    settings: engineSettings(settings),
    settled: row?.settled ?? [],
  };
}

/** Runs remembered as settled per schedule: far more than can settle between two reads of the index. */
const settledRing = 100;

function withSettled(ring: readonly SettledRun[], entry: SettledRun): SettledRun[] {
  return [...ring, entry].slice(-settledRing);
}

/** Appends records and keeps the newest `keep`; records of runs still in progress are never dropped. */
export function keepRuns(runs: readonly RunRecord[], keep: number): RunRecord[] {
  const excess = runs.length - keep;
  if (excess <= 0) return [...runs];
  let drop = excess;
  return runs.filter((r) => {
    if (drop > 0 && r.outcome !== 'running') {
      drop--;
      return false;
    }
    return true;
  });
}

function withRunOutcome(
  row: ScheduleRow,
  runId: string,
  outcome: TargetOutcome | { outcome: 'failed'; reason: string },
  finishedAt: string,
): RunRecord[] {
  return row.runs.map((r) => {
    if (r.runId !== runId) return r;
    if (outcome.outcome === 'started') return { ...r, detail: `started ${outcome.handle}` };
    const { detail: _old, ...rest } = r;
    return outcome.outcome === 'succeeded'
      ? { ...rest, outcome: 'succeeded', finishedAt, ...(outcome.detail === undefined ? {} : { detail: outcome.detail }) }
      : { ...rest, outcome: 'failed', finishedAt, reason: outcome.reason };
  });
}

type Claim =
  /** `traceparent`: of the request that triggered the run, when it was a trigger. */
  | { readonly kind: 'claimed'; readonly row: ScheduleRow; readonly traceparent?: string | undefined }
  | { readonly kind: 'refused'; readonly row: ScheduleRow | undefined }
  | { readonly kind: 'done'; readonly row: ScheduleRow; readonly record: RunRecord };

export class ScheduleActivities {
  private readonly telemetry;

  constructor(private readonly deps: ActivityDeps) {
    this.telemetry = (deps.telemetry ?? noTelemetry).of(scheduleTelemetry);
  }

  private counted(
    scheduleId: string,
    row: ScheduleRow | undefined,
    outcome: RunRecord['outcome'] | 'refused' | 'started',
    count = 1,
  ): void {
    if (outcome === 'running') return;
    this.telemetry.metrics.runs.add(count, {
      'tallyho.schedule.id': scheduleId,
      ...(row === undefined ? {} : { 'tallyho.schedule.target.type': row.definition.target.type }),
      'tallyho.outcome': outcome,
    });
  }

  /** Read-modify-write with the row's ETag, retried on a lost race; `known` (just written by us) saves the first read. */
  private update<T>(id: string, attempt: (row: ScheduleRow | undefined) => Promise<T>, known?: ScheduleRow): Promise<T> {
    return retryLostRaces(retryContextOf(this.deps, `schedule ${id}`), async (n) =>
      attempt(n === 0 && known !== undefined ? known : await this.deps.table.read(id)),
    );
  }

  private async write(row: ScheduleRow, next: NewScheduleRow): Promise<ScheduleRow> {
    return this.deps.table.replace(row, { ...next, updatedAt: new Date(this.deps.clock.now()).toISOString() });
  }

  private claim(input: RunInput): Promise<Claim> {
    return this.update(input.scheduleId, async (row): Promise<Claim> => {
      if (row === undefined) return { kind: 'refused', row };
      const mine = row.runs.find((r) => r.runId === input.runId);
      if (mine !== undefined && mine.outcome !== 'running') return { kind: 'done', row, record: mine };
      // A retried activity finds its own claim and runs the target again (at least once).
      if (mine !== undefined) return { kind: 'claimed', row };
      const trigger = input.fire.triggerId;
      const traceparent = row.triggers.find((t) => t.id === trigger)?.traceparent;
      const open = row.state === 'active' || row.state === 'pending' || (trigger !== undefined && row.state === 'paused');
      if (!open || (trigger !== undefined && !row.triggers.some((t) => t.id === trigger))) {
        // Leave a trace, for an orchestration that stopped waiting on this run.
        const refused = await this.write(row, { ...row, settled: withSettled(row.settled, { runId: input.runId, outcome: 'refused' }) });
        return { kind: 'refused', row: refused };
      }
      const record: RunRecord = {
        runId: input.runId,
        at: input.fire.at,
        kind: input.fire.kind,
        outcome: 'running',
        startedAt: input.now,
        ...(trigger === undefined ? {} : { triggerId: trigger }),
      };
      const claimed = await this.write(row, {
        ...row,
        runs: keepRuns([...row.runs, record], this.deps.settings.historyRuns),
        runCount: row.runCount + 1,
        firedCount: row.firedCount + (trigger === undefined ? 1 : 0),
        triggers: row.triggers.filter((t) => t.id !== trigger),
        nextFireAt: input.nextFireAt ?? undefined,
      });
      return { kind: 'claimed', row: claimed, traceparent };
    });
  }

  /**
   * Records how a run went. `completes`: it was the one fire of a one-off, which ends with it (the
   * orchestration then has nothing left to write). `known`: the row as our claim left it.
   */
  private async record(
    input: { scheduleId: string; runId: string },
    outcome: TargetOutcome,
    now: string,
    completes: boolean,
    known?: ScheduleRow,
  ): Promise<ScheduleRow | undefined> {
    const settled: SettledRun =
      outcome.outcome === 'started'
        ? { runId: input.runId, outcome: 'started', handle: outcome.handle }
        : { runId: input.runId, outcome: outcome.outcome };
    const ends = completes && outcome.outcome !== 'started';
    return this.update(
      input.scheduleId,
      async (row) => {
        if (row === undefined) return undefined;
        const runs = withRunOutcome(row, input.runId, outcome, now);
        const end = ends && row.state !== 'cancelled' && !runs.some((r) => r.outcome === 'running');
        return this.write(row, {
          ...row,
          runs,
          settled: withSettled(row.settled, settled),
          ...(end ? { state: 'completed' as const, nextFireAt: undefined, triggers: [], ackVersion: row.controlVersion } : {}),
        });
      },
      known,
    );
  }

  /** The one scheduled fire of a one-off: once it has run, the schedule has nothing left to do. */
  private completes(row: ScheduleRow, input: RunInput): boolean {
    return row.definition.timing.kind === 'once' && input.fire.kind !== 'trigger' && input.nextFireAt === null;
  }

  /** Claims the fire, runs the target, records the outcome. */
  async run(input: RunInput): Promise<RunOutcome> {
    const claim = await this.claim(input);
    const { settings, logger } = this.deps;
    if (claim.kind === 'refused') {
      this.counted(input.scheduleId, claim.row, 'refused');
      return { outcome: 'refused', snapshot: snapshotOf(claim.row, settings) };
    }
    if (claim.kind === 'done') {
      const r = claim.record;
      const snapshot = snapshotOf(claim.row, settings);
      return r.outcome === 'succeeded'
        ? { outcome: 'succeeded', ...(r.detail === undefined ? {} : { detail: r.detail }), snapshot }
        : { outcome: 'failed', reason: r.reason ?? r.outcome, snapshot };
    }
    const ctx = { scheduleId: input.scheduleId, runId: input.runId, fire: input.fire, createdBy: claim.row.createdBy };
    const { target } = claim.row.definition;
    const schedule = { 'tallyho.schedule.id': input.scheduleId };
    // On the orchestration's clock, like the due time: a devhost virtual clock measures the same lateness.
    const lateness = latenessSeconds(input.fire, input.now);
    if (lateness !== undefined) this.telemetry.metrics.lateness.record(lateness, schedule);
    const began = this.deps.clock.now();
    const attributes = { ...schedule, 'tallyho.schedule.target.type': target.type };
    const parent = claim.traceparent === undefined ? {} : { parent: claim.traceparent };
    const outcome = await this.telemetry.spans.run.run({ attributes, ...parent }, () =>
      runTarget(target, ctx, this.deps.effects, this.deps.telemetry),
    );
    this.counted(input.scheduleId, claim.row, outcome.outcome);
    // On the orchestration's clock (a devhost virtual clock included): when it started the run plus how long the target took.
    const finishedAt = new Date(Date.parse(input.now) + (this.deps.clock.now() - began)).toISOString();
    logger.log(outcome.outcome === 'failed' ? 'warn' : 'debug', 'schedules.run', {
      schedule: input.scheduleId,
      runId: input.runId,
      due: input.fire.at,
      kind: input.fire.kind,
      createdBy: claim.row.createdBy,
      outcome: outcome.outcome,
      ...(outcome.outcome === 'failed' ? { reason: outcome.reason } : {}),
    });
    const row = await this.record(input, outcome, finishedAt, this.completes(claim.row, input), claim.row);
    return { ...outcome, snapshot: snapshotOf(row, settings) };
  }

  /** Asks a run that completes later (a job) how it is going; records it once it has ended. */
  async poll(input: PollInput): Promise<RunOutcome> {
    const row = await this.deps.table.read(input.scheduleId);
    if (row === undefined) return { outcome: 'failed', reason: 'the schedule is gone' };
    const outcome = await pollTarget(row.definition.target, input.handle, this.deps.effects);
    if (outcome.outcome === 'running') return { outcome: 'running', snapshot: snapshotOf(row, this.deps.settings) };
    this.counted(input.scheduleId, row, outcome.outcome);
    const kind = row.runs.find((r) => r.runId === input.runId)?.kind;
    const after = await this.record(
      input,
      outcome,
      input.now,
      row.definition.timing.kind === 'once' && kind !== undefined && kind !== 'trigger',
      row,
    );
    return { ...outcome, snapshot: snapshotOf(after, this.deps.settings) };
  }

  /** Writes skips, misses, lost runs and the next fire time; ends the schedule when told to. Returns the control state. */
  async checkpoint(input: CheckpointInput): Promise<ControlSnapshot> {
    const { settings } = this.deps;
    const row = await this.update(input.scheduleId, async (row) => {
      if (row === undefined) return undefined;
      let runs: RunRecord[] = [...row.runs, ...input.records];
      let settled = row.settled;
      for (const lost of input.lostRuns ?? []) {
        runs = runs.map((r) =>
          r.runId === lost.runId && r.outcome === 'running' ? { ...r, outcome: 'failed', reason: lost.reason, finishedAt: input.now } : r,
        );
        settled = withSettled(settled, { runId: lost.runId, outcome: 'failed' });
      }
      let state = row.state === 'pending' ? 'active' : row.state;
      if (input.final !== undefined) state = state === 'cancelled' || input.final === 'cancelled' ? 'cancelled' : 'completed';
      const finished = state === 'cancelled' || state === 'completed';
      const nextFireAt = finished || state === 'paused' ? undefined : (input.nextFireAt ?? undefined);
      const next: NewScheduleRow = {
        ...row,
        state,
        runs: keepRuns(runs, settings.historyRuns),
        nextFireAt,
        ackVersion: row.controlVersion,
        settled,
        ...(input.final === undefined ? {} : { triggers: [] }),
      };
      const unchanged =
        next.state === row.state &&
        next.nextFireAt === row.nextFireAt &&
        next.ackVersion === row.ackVersion &&
        input.records.length === 0 &&
        (input.lostRuns ?? []).length === 0;
      return unchanged ? row : this.write(row, next);
    });
    for (const record of input.records) this.counted(input.scheduleId, row, record.outcome, record.count ?? 1);
    return snapshotOf(row, settings);
  }
}
