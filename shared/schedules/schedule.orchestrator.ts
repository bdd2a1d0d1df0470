/**
 * One eternal orchestration per schedule (instance id = schedule id). It sleeps on a durable timer
 * until the next fire, raced against the `wake` event (the index changed: pause, resume, cancel,
 * trigger) and the runs it just started; decisions come from `machine.ts`, I/O happens in
 * activities.
 *
 * The index row, not the event, is the truth for control requests: a wake-up only makes the
 * orchestration read it (checkpoint), and every run claim re-reads it, so a lost event delays a
 * pause or a trigger but can never make a paused or cancelled schedule fire. A sleep never lasts
 * longer than the recheck interval, which bounds that delay.
 *
 * A task may be part of one `Task.any` only: the library sends a compound's children as actions, so
 * a pending task put into a second compound would be scheduled twice. A run therefore races only the
 * wait it is started in; a run that outlives that wait is followed through the index (its activity
 * records how it ended there), read every `runCheckMs` until it has.
 *
 * History stays short: after `executionLength` turns the orchestration continues as new with its
 * state. Before it does, it drains wake events that arrived meanwhile (the JS library drops
 * unconsumed events at `continueAsNew`).
 */
import type { OrchestrationContext, OrchestrationHandler, RetryOptions, Task } from 'durable-functions';

import {
  begin,
  duePolls,
  markPolled,
  needsCheck,
  nextScheduledFire,
  nextWake,
  type Plan,
  planControl,
  planRunResult,
  planTick,
  type ScheduleState,
} from './machine';
import { scheduleActivities, wakeEvent } from './names';
import type { CheckpointInput, ControlSnapshot, PollInput, RunInput, RunOutcome, RunRecord } from './records';

/** Turns of the loop per execution before `continueAsNew` trims the history. */
const executionLength = 25;

/** Activities retry storage outages; a target's own failure is an outcome, not an exception. */
const activityRetry: RetryOptions = {
  firstRetryIntervalInMilliseconds: 2000,
  maxNumberOfAttempts: 5,
  backoffCoefficient: 2,
  maxRetryIntervalInMilliseconds: 60_000,
  retryTimeoutInMilliseconds: 10 * 60_000,
};

function failureText(task: Task): string {
  const err = task.result;
  const text = err instanceof Error ? err.message : String(err);
  return `the run activity failed: ${text.split('\n')[0] ?? text}`.slice(0, 500);
}

const done = (task: Task): boolean => task.isCompleted || task.isFaulted;

/** The orchestration's state across turns, and its steps; every Durable call is made in the order the loop below makes it. */
class ScheduleLoop {
  state: ScheduleState;
  /** Runs decided but not started yet: they start (their tasks are created) in the next wait. */
  toStart: RunInput[] = [];
  records: RunRecord[] = [];
  lostRuns: { runId: string; reason: string }[] = [];
  plan: Plan | undefined;
  /** The index's state as last seen (from a checkpoint or a run's answer). */
  seen: ControlSnapshot['state'] | undefined;

  constructor(private readonly df: OrchestrationContext['df']) {
    this.state = begin(df.getInput<ScheduleState>(), df.currentUtcDateTime);
  }

  apply(next: Plan): void {
    this.state = next.state;
    this.plan = next;
    this.records.push(...next.records);
    for (const start of next.start) {
      const now = this.df.currentUtcDateTime.toISOString();
      this.toStart.push({ scheduleId: this.state.id, runId: start.runId, fire: start.fire, now, nextFireAt: next.nextFireAt ?? null });
    }
  }

  *checkpoint(final?: 'completed' | 'cancelled'): Generator<Task, ControlSnapshot, unknown> {
    const { df } = this;
    const input: CheckpointInput = {
      scheduleId: this.state.id,
      now: df.currentUtcDateTime.toISOString(),
      nextFireAt: final === undefined ? (nextScheduledFire(this.state)?.toISOString() ?? null) : null,
      records: this.records,
      ...(this.lostRuns.length > 0 ? { lostRuns: this.lostRuns } : {}),
      ...(final === undefined ? {} : { final }),
    };
    this.records = [];
    this.lostRuns = [];
    const snapshot = (yield df.callActivityWithRetry(scheduleActivities.checkpoint, activityRetry, input)) as ControlSnapshot;
    this.seen = snapshot.state;
    return snapshot;
  }

  /** Reads the index and plans from what it says. */
  *control(): Generator<Task, void, unknown> {
    this.apply(planControl(this.state, yield* this.checkpoint(), this.df.currentUtcDateTime));
  }

  /**
   * Before continuing as new: an event already delivered completes this waiter at once (then the
   * index is read, and `true`: go on); otherwise the timer wins and the history is trimmed.
   */
  *drained(): Generator<Task, boolean, unknown> {
    const { df } = this;
    const wake = df.waitForExternalEvent(wakeEvent);
    const now = df.createTimer(df.currentUtcDateTime);
    if ((yield df.Task.any([wake, now])) === wake) {
      if (!now.isCompleted) now.cancel();
      yield* this.control();
      return true;
    }
    df.continueAsNew(this.state);
    return false;
  }

  /** Starts the decided runs and the due polls; they race this wait (and only this one). */
  startLive(): Map<string, Task> {
    const { df } = this;
    const live = new Map<string, Task>();
    for (const input of this.toStart) live.set(input.runId, df.callActivityWithRetry(scheduleActivities.run, activityRetry, input));
    this.toStart = [];
    const polls = duePolls(this.state, df.currentUtcDateTime);
    for (const run of polls) {
      const input: PollInput = {
        scheduleId: this.state.id,
        runId: run.runId,
        handle: run.handle ?? '',
        now: df.currentUtcDateTime.toISOString(),
      };
      live.set(run.runId, df.callActivityWithRetry(scheduleActivities.poll, activityRetry, input));
    }
    if (polls.length > 0) {
      this.state = markPolled(
        this.state,
        polls.map((r) => r.runId),
        df.currentUtcDateTime,
      );
    }
    return live;
  }

  /** Runs that ended during this wait; the others are followed through the index from now on. */
  settle(live: ReadonlyMap<string, Task>): void {
    for (const [runId, task] of live) {
      if (!done(task)) continue;
      let outcome: RunOutcome;
      if (task.isFaulted) {
        outcome = { outcome: 'failed', reason: failureText(task) };
        this.lostRuns.push({ runId, reason: outcome.reason });
      } else {
        outcome = task.result as RunOutcome;
        if (outcome.snapshot !== undefined) this.seen = outcome.snapshot.state;
      }
      this.apply(planRunResult(this.state, runId, outcome, this.df.currentUtcDateTime));
    }
  }

  /** One wait: the runs and polls started, a timer to the next wake-up, the wake event; then what the winner says. */
  *wait(current: Plan): Generator<Task, void, unknown> {
    const { df } = this;
    const live = this.startLive();
    const wakeAt = current.finished === undefined ? nextWake(this.state, df.currentUtcDateTime, new Set(live.keys())) : undefined;
    const timer = wakeAt === undefined ? undefined : df.createTimer(new Date(wakeAt));
    const wake = df.waitForExternalEvent(wakeEvent);
    this.plan = undefined;
    const winner = (yield df.Task.any([wake, ...(timer === undefined ? [] : [timer]), ...live.values()])) as Task;
    if (timer !== undefined && winner !== timer && !timer.isCompleted) timer.cancel();
    this.settle(live);
    const now = df.currentUtcDateTime;
    if (winner === wake || (winner === timer && needsCheck(this.state, now))) yield* this.control();
    else if (winner === timer) this.apply(planTick(this.state, now));
  }
}

export const scheduleOrchestratorHandler: OrchestrationHandler = function* (context: OrchestrationContext) {
  const loop = new ScheduleLoop(context.df);
  // Every execution starts by reading the index (this also activates a freshly created row).
  yield* loop.control();
  for (let turn = 0; ; turn++) {
    if (loop.records.length > 0 || loop.lostRuns.length > 0) {
      yield* loop.control();
      continue;
    }
    const current = loop.plan ?? planTick(loop.state, context.df.currentUtcDateTime);
    if (current.finished !== undefined && loop.toStart.length === 0) {
      // A one-off's run already ended the schedule in the index; otherwise say it now.
      if (!(current.finished === 'completed' && loop.seen === 'completed')) yield* loop.checkpoint(current.finished);
      return current.finished;
    }
    if (turn >= executionLength && loop.toStart.length === 0) {
      if (yield* loop.drained()) continue;
      return undefined;
    }
    yield* loop.wait(current);
  }
};
