/**
 * The schedule orchestration's decisions as a pure state machine: the orchestrator feeds it what
 * happened (time passed, a control snapshot arrived, a run ended) with `currentUtcDateTime`, and
 * carries out the plan it returns (start runs, record skips, set the next timer, finish). Keeping
 * every decision here makes them replay-safe and testable without a Durable host.
 */
import type { ScheduleDefinition } from './definition';
import { admitFires, type Fire, type QueuedFire, nextQueued, selectDueFires } from './policies';
import type { ControlSnapshot, EngineSettings, RunOutcome, RunRecord } from './records';
import { dueFires, nextFireAfter } from './timing';

export interface RunningRun {
  readonly runId: string;
  readonly fire: Fire;
  readonly startedAt: string;
  /** Runs that complete later (a job): the handle to poll and when to poll it next. */
  readonly handle?: string;
  readonly pollAt?: string;
}

/** `cancelling` / `completing`: the index says the schedule has ended; runs in progress finish first. */
type Mode = 'active' | 'paused' | 'cancelling' | 'completing';

/** Everything the orchestration carries from one execution to the next (`continueAsNew` input). */
export interface ScheduleState {
  readonly id: string;
  readonly definition: ScheduleDefinition;
  readonly settings: EngineSettings;
  /**
   * The newest fire time already dealt with (run, skipped or missed); the next fire comes after it.
   * Empty until the first turn.
   */
  readonly cursor: string;
  readonly mode: Mode;
  readonly running: readonly RunningRun[];
  readonly queued: readonly QueuedFire[];
  /** Runs numbered so far; run ids are `<schedule id>#<number>`. */
  readonly runs: number;
  /** Trigger requests already turned into fires (newest last), so a repeated snapshot adds none. */
  readonly seenTriggers: readonly string[];
  /** When the control state in the index was last read. */
  readonly checkedAt: string;
}

interface StartRun {
  readonly runId: string;
  readonly fire: Fire;
}

export interface Plan {
  readonly state: ScheduleState;
  readonly start: readonly StartRun[];
  /** Skipped and missed fires to write to the index. */
  readonly records: readonly RunRecord[];
  /** The next scheduled fire (for the index), if the schedule is active and has one. */
  readonly nextFireAt: string | undefined;
  /** When to wake up next, if anything is left to wait for. */
  readonly wakeAt: string | undefined;
  /** Set when the orchestration should end (nothing in progress any more). */
  readonly finished: 'completed' | 'cancelled' | undefined;
}

const maxSeenTriggers = 50;

export function initialState(id: string, definition: ScheduleDefinition, settings: EngineSettings, createdAt: Date): ScheduleState {
  // A one-off considers its `at` even when it is already past (it fires at once). A cron starts
  // from the orchestration's own clock on its first turn (empty cursor), not from the caller's.
  return {
    id,
    definition,
    settings,
    cursor: definition.timing.kind === 'once' ? new Date(0).toISOString() : '',
    mode: 'active',
    running: [],
    queued: [],
    runs: 0,
    seenTriggers: [],
    checkedAt: createdAt.toISOString(),
  };
}

function skipRecord(fire: Fire, reason: string): RunRecord {
  return {
    at: fire.at,
    kind: fire.kind,
    outcome: 'skipped',
    reason,
    ...(fire.triggerId === undefined ? {} : { triggerId: fire.triggerId }),
  };
}

class Planner {
  state: ScheduleState;
  readonly start: StartRun[] = [];
  readonly records: RunRecord[] = [];

  constructor(
    state: ScheduleState,
    readonly now: Date,
  ) {
    this.state = state.cursor === '' ? { ...state, cursor: now.toISOString() } : state;
  }

  private launch(fire: Fire): void {
    const runs = this.state.runs + 1;
    const runId = `${this.state.id}#${runs}`;
    const run: RunningRun = { runId, fire, startedAt: this.now.toISOString() };
    this.state = { ...this.state, runs, running: [...this.state.running, run] };
    this.start.push({ runId, fire });
  }

  admit(fires: readonly Fire[]): void {
    if (fires.length === 0) return;
    const { definition, settings } = this.state;
    const arrivals = admitFires(
      definition.overlap,
      { running: this.state.running.length, queued: this.state.queued },
      fires,
      settings.maxConcurrentRuns,
    );
    for (const arrival of arrivals) {
      if (arrival.action === 'start') this.launch(arrival.fire);
      else if (arrival.action === 'queue') this.state = { ...this.state, queued: [...this.state.queued, arrival.fire] };
      else this.records.push(skipRecord(arrival.fire, arrival.reason));
    }
  }

  drainQueue(): void {
    for (;;) {
      const fire = nextQueued(this.state.definition.overlap, { running: this.state.running.length, queued: this.state.queued });
      if (fire === undefined) return;
      this.state = { ...this.state, queued: this.state.queued.slice(1) };
      const { backlog: _backlog, ...plain } = fire;
      this.launch(plain);
    }
  }

  dropQueue(reason: string): void {
    for (const fire of this.state.queued) this.records.push(skipRecord(fire, reason));
    this.state = { ...this.state, queued: [] };
  }

  /** Follows the runs the index says have ended (or, for a job, started) since we last looked. */
  settle(snapshot: ControlSnapshot): void {
    const latest = new Map(snapshot.settled.map((r) => [r.runId, r]));
    const running: RunningRun[] = [];
    for (const run of this.state.running) {
      const settled = latest.get(run.runId);
      if (settled === undefined) running.push(run);
      else if (settled.outcome === 'started') {
        running.push(run.handle !== undefined || settled.handle === undefined ? run : this.polling({ ...run, handle: settled.handle }));
      }
    }
    this.state = { ...this.state, running };
  }

  private polling(run: RunningRun): RunningRun {
    return { ...run, pollAt: new Date(this.now.getTime() + this.state.settings.pollMs).toISOString() };
  }

  /** Takes in every fire that has come due since the cursor. */
  collectDue(): void {
    if (this.state.mode !== 'active') return;
    const { timing, catchUp } = this.state.definition;
    const decision = selectDueFires(timing, catchUp, new Date(this.state.cursor), this.now, this.state.settings.graceMs);
    if (decision.missed > 0) {
      this.records.push({
        at: decision.cursor.toISOString(),
        kind: 'catchUp',
        outcome: 'missed',
        count: decision.missed,
        reason: 'catchUp',
      });
    }
    this.state = { ...this.state, cursor: decision.cursor.toISOString() };
    this.admit(decision.run);
  }

  plan(): Plan {
    this.drainQueue();
    this.collectDue();
    const { state, now } = this;
    const next = nextScheduledFire(state);
    const idle = state.running.length === 0 && state.queued.length === 0;
    let finished: Plan['finished'];
    if (idle && state.mode === 'cancelling') finished = 'cancelled';
    else if (idle && state.mode === 'completing') finished = 'completed';
    else if (idle && state.mode === 'active' && next === undefined) finished = 'completed';
    const wakeAt = finished === undefined ? nextWake(state, now) : undefined;
    return { state, start: this.start, records: this.records, nextFireAt: next?.toISOString(), wakeAt, finished };
  }
}

/** The next scheduled fire of an active schedule (what the index shows as `nextFireAt`). */
export function nextScheduledFire(state: ScheduleState): Date | undefined {
  return state.mode === 'active' && state.cursor !== '' ? nextFireAfter(state.definition.timing, new Date(state.cursor)) : undefined;
}

/** The state on the orchestration's first turn: a recurrence starts counting from now. */
export function begin(state: ScheduleState, now: Date): ScheduleState {
  return state.cursor === '' ? { ...state, cursor: now.toISOString() } : state;
}

/**
 * When the orchestration must wake next: the next fire, the next poll of a run that completes
 * later, or the recheck of the index, whichever comes first.
 */
export function nextWake(state: ScheduleState, now: Date, watched: ReadonlySet<string> = new Set()): string {
  const wakes = [Math.max(now.getTime(), Date.parse(state.checkedAt) + state.settings.recheckMs)];
  if (awaitingIndex(state, watched)) wakes.push(now.getTime() + state.settings.runCheckMs);
  const next = nextScheduledFire(state);
  if (next !== undefined) wakes.push(next.getTime());
  for (const run of state.running) if (run.pollAt !== undefined) wakes.push(Date.parse(run.pollAt));
  return new Date(Math.min(...wakes)).toISOString();
}

/**
 * Runs whose end only the index can tell (they outlived the wait they were started in, unlike the
 * `watched` ones the orchestration is waiting on now; jobs are polled instead), so the orchestration
 * reads it every `runCheckMs`.
 */
function awaitingIndex(state: ScheduleState, watched: ReadonlySet<string> = new Set()): boolean {
  return state.running.some((r) => r.handle === undefined && !watched.has(r.runId));
}

/** Whether a wake-up should read the index first: a recheck is due, or a run's end is only known there. */
export function needsCheck(state: ScheduleState, now: Date): boolean {
  return awaitingIndex(state) || now.getTime() >= Date.parse(state.checkedAt) + state.settings.recheckMs;
}

/** Time has passed (a timer fired, or the orchestration just started): fire what is due. */
export function planTick(state: ScheduleState, now: Date): Plan {
  return new Planner(state, now).plan();
}

/** The index's control state was read: follow pause, resume, cancel and trigger requests. */
export function planControl(state: ScheduleState, snapshot: ControlSnapshot, now: Date): Plan {
  const p = new Planner({ ...state, checkedAt: now.toISOString(), settings: snapshot.settings }, now);
  const mode = p.state.mode;
  if (snapshot.state === 'cancelled' || snapshot.state === 'completed') {
    if (mode !== 'cancelling' && mode !== 'completing') p.dropQueue(snapshot.state);
    p.state = { ...p.state, mode: snapshot.state === 'cancelled' ? 'cancelling' : 'completing' };
  } else if (snapshot.state === 'paused' && mode === 'active') {
    p.dropQueue('paused');
    p.state = { ...p.state, mode: 'paused' };
  } else if (snapshot.state === 'active' && mode === 'paused') {
    // A recurrence resumes with its next fire: fires due while paused are skipped, not caught up.
    // A one-off whose time passed while paused is left due, so the catch-up policy decides.
    const { timing } = p.state.definition;
    const skipped = timing.kind === 'cron' ? dueFires(timing, new Date(p.state.cursor), now, 1) : { latest: [], count: 0 };
    const last = skipped.latest[0];
    if (last !== undefined) {
      p.records.push({ at: last.toISOString(), kind: 'scheduled', outcome: 'skipped', reason: 'paused', count: skipped.count });
      p.state = { ...p.state, cursor: last.toISOString() };
    }
    p.state = { ...p.state, mode: 'active' };
  }
  p.settle(snapshot);
  const fresh = snapshot.triggers.filter((t) => !p.state.seenTriggers.includes(t.id));
  if (fresh.length > 0) {
    p.state = { ...p.state, seenTriggers: [...p.state.seenTriggers, ...fresh.map((t) => t.id)].slice(-maxSeenTriggers) };
    if (p.state.mode === 'cancelling' || p.state.mode === 'completing') {
      for (const t of fresh) p.records.push(skipRecord({ at: t.requestedAt, kind: 'trigger', triggerId: t.id }, 'cancelled'));
    } else {
      // Each trigger arrives on its own: trigger-now obeys the overlap policy like any fire.
      for (const t of fresh) p.admit([{ at: t.requestedAt, kind: 'trigger', triggerId: t.id }]);
    }
  }
  return p.plan();
}

/** A run reported back: finished, refused by the index (paused or cancelled meanwhile), or started (async). */
export function planRunResult(state: ScheduleState, runId: string, result: RunOutcome, now: Date): Plan {
  const run = state.running.find((r) => r.runId === runId);
  if (run === undefined) return planTick(state, now);
  if (result.outcome === 'started' || result.outcome === 'running') {
    const pollAt = new Date(now.getTime() + state.settings.pollMs).toISOString();
    const handle = result.outcome === 'started' ? result.handle : run.handle;
    const updated: RunningRun = { ...run, pollAt, ...(handle === undefined ? {} : { handle }) };
    const next = { ...state, running: state.running.map((r) => (r.runId === runId ? updated : r)) };
    return result.snapshot === undefined ? planTick(next, now) : planControl(next, result.snapshot, now);
  }
  const next = { ...state, running: state.running.filter((r) => r.runId !== runId) };
  return result.snapshot === undefined ? planTick(next, now) : planControl(next, result.snapshot, now);
}

/** The runs whose poll time has come (async targets). */
export function duePolls(state: ScheduleState, now: Date): RunningRun[] {
  return state.running.filter((r) => r.handle !== undefined && r.pollAt !== undefined && Date.parse(r.pollAt) <= now.getTime());
}

/** Moves the next poll of these runs one poll interval on (an answer, when it comes, ends or keeps them). */
export function markPolled(state: ScheduleState, runIds: readonly string[], now: Date): ScheduleState {
  const pollAt = new Date(now.getTime() + state.settings.pollMs).toISOString();
  return { ...state, running: state.running.map((r) => (runIds.includes(r.runId) ? { ...r, pollAt } : r)) };
}
