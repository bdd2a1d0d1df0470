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

export const scheduleOrchestratorHandler: OrchestrationHandler = function* (context: OrchestrationContext) {
  const df = context.df;
  let state = begin(df.getInput<ScheduleState>(), df.currentUtcDateTime);
  /** Runs decided but not started yet: they start (their tasks are created) in the next wait. */
  let toStart: RunInput[] = [];
  let records: RunRecord[] = [];
  let lostRuns: { runId: string; reason: string }[] = [];
  let plan: Plan | undefined;
  /** The index's state as last seen (from a checkpoint or a run's answer). */
  let seen: ControlSnapshot['state'] | undefined;

  const apply = (next: Plan): void => {
    state = next.state;
    plan = next;
    records.push(...next.records);
    for (const start of next.start) {
      const now = df.currentUtcDateTime.toISOString();
      toStart.push({ scheduleId: state.id, runId: start.runId, fire: start.fire, now, nextFireAt: next.nextFireAt ?? null });
    }
  };

  function* checkpoint(final?: 'completed' | 'cancelled'): Generator<Task, ControlSnapshot, unknown> {
    const input: CheckpointInput = {
      scheduleId: state.id,
      now: df.currentUtcDateTime.toISOString(),
      nextFireAt: final === undefined ? (nextScheduledFire(state)?.toISOString() ?? null) : null,
      records,
      ...(lostRuns.length > 0 ? { lostRuns } : {}),
      ...(final === undefined ? {} : { final }),
    };
    records = [];
    lostRuns = [];
    const snapshot = (yield df.callActivityWithRetry(scheduleActivities.checkpoint, activityRetry, input)) as ControlSnapshot;
    seen = snapshot.state;
    return snapshot;
  }

  // Every execution starts by reading the index (this also activates a freshly created row).
  apply(planControl(state, yield* checkpoint(), df.currentUtcDateTime));

  for (let turn = 0; ; turn++) {
    if (records.length > 0 || lostRuns.length > 0) {
      apply(planControl(state, yield* checkpoint(), df.currentUtcDateTime));
      continue;
    }
    const current = plan ?? planTick(state, df.currentUtcDateTime);
    if (current.finished !== undefined && toStart.length === 0) {
      // A one-off's run already ended the schedule in the index; otherwise say it now.
      if (!(current.finished === 'completed' && seen === 'completed')) yield* checkpoint(current.finished);
      return current.finished;
    }

    if (turn >= executionLength && toStart.length === 0) {
      // Drain: an event already delivered completes this waiter at once; otherwise the timer wins.
      const wake = df.waitForExternalEvent(wakeEvent);
      const now = df.createTimer(df.currentUtcDateTime);
      if ((yield df.Task.any([wake, now])) === wake) {
        if (!now.isCompleted) now.cancel();
        apply(planControl(state, yield* checkpoint(), df.currentUtcDateTime));
        continue;
      }
      df.continueAsNew(state);
      return undefined;
    }

    // Start the decided runs and the due polls; they race this wait (and only this one).
    const live = new Map<string, Task>();
    for (const input of toStart) live.set(input.runId, df.callActivityWithRetry(scheduleActivities.run, activityRetry, input));
    toStart = [];
    const polls = duePolls(state, df.currentUtcDateTime);
    for (const run of polls) {
      const input: PollInput = {
        scheduleId: state.id,
        runId: run.runId,
        handle: run.handle ?? '',
        now: df.currentUtcDateTime.toISOString(),
      };
      live.set(run.runId, df.callActivityWithRetry(scheduleActivities.poll, activityRetry, input));
    }
    if (polls.length > 0) {
      state = markPolled(
        state,
        polls.map((r) => r.runId),
        df.currentUtcDateTime,
      );
    }
    const wakeAt = current.finished === undefined ? nextWake(state, df.currentUtcDateTime, new Set(live.keys())) : undefined;
    const timer = wakeAt === undefined ? undefined : df.createTimer(new Date(wakeAt));
    const wake = df.waitForExternalEvent(wakeEvent);
    plan = undefined;
    const winner = (yield df.Task.any([wake, ...(timer === undefined ? [] : [timer]), ...live.values()])) as Task;
    if (timer !== undefined && winner !== timer && !timer.isCompleted) timer.cancel();

    // Runs that ended during this wait; the others are followed through the index from now on.
    for (const [runId, task] of live) {
      if (!done(task)) continue;
      let outcome: RunOutcome;
      if (task.isFaulted) {
        outcome = { outcome: 'failed', reason: failureText(task) };
        lostRuns.push({ runId, reason: outcome.reason });
      } else {
        outcome = task.result as RunOutcome;
        if (outcome.snapshot !== undefined) seen = outcome.snapshot.state;
      }
      apply(planRunResult(state, runId, outcome, df.currentUtcDateTime));
    }
    const now = df.currentUtcDateTime;
    if (winner === wake || (winner === timer && needsCheck(state, now))) {
      apply(planControl(state, yield* checkpoint(), df.currentUtcDateTime));
    } else if (winner === timer) {
      apply(planTick(state, now));
    }
  }
};
