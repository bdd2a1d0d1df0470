/**
 * One eternal orchestration per schedule (instance id = schedule id). It sleeps on a durable timer
 * until the next fire, raced against the `wake` event (the index changed: pause, resume, cancel,
 * trigger) and the runs in progress; decisions come from `machine.ts`, I/O happens in activities.
 *
 * The index row, not the event, is the truth for control requests: a wake-up only makes the
 * orchestration read it (checkpoint), and every run claim re-reads it, so a lost event delays a
 * pause or a trigger but can never make a paused or cancelled schedule fire. A sleep never lasts
 * longer than the recheck interval, which bounds that delay.
 *
 * History stays short: after `executionLength` turns, once no run activity is in flight, the
 * orchestration continues as new with its state. Before it does, it drains wake events that
 * arrived meanwhile (the JS library drops unconsumed events at `continueAsNew`).
 */
import type { OrchestrationContext, OrchestrationHandler, RetryOptions, Task } from 'durable-functions';

import { duePolls, markPolled, nextWake, type Plan, planControl, planRunResult, planTick, type ScheduleState } from './machine';
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

export const scheduleOrchestratorHandler: OrchestrationHandler = function* (context: OrchestrationContext) {
  const df = context.df;
  let state = df.getInput<ScheduleState>();
  const inflight = new Map<string, Task>();
  let records: RunRecord[] = [];
  let lostRuns: { runId: string; reason: string }[] = [];
  let latest: Plan | undefined;

  const apply = (plan: Plan): void => {
    state = plan.state;
    latest = plan;
    records.push(...plan.records);
    for (const start of plan.start) {
      const input: RunInput = {
        scheduleId: state.id,
        runId: start.runId,
        fire: start.fire,
        now: df.currentUtcDateTime.toISOString(),
        nextFireAt: plan.nextFireAt ?? null,
      };
      inflight.set(start.runId, df.callActivityWithRetry(scheduleActivities.run, activityRetry, input));
    }
  };

  function* checkpoint(final?: 'completed' | 'cancelled'): Generator<Task, ControlSnapshot, unknown> {
    const input: CheckpointInput = {
      scheduleId: state.id,
      now: df.currentUtcDateTime.toISOString(),
      nextFireAt: final === undefined ? (latest?.nextFireAt ?? null) : null,
      records,
      ...(lostRuns.length > 0 ? { lostRuns } : {}),
      ...(final === undefined ? {} : { final }),
    };
    records = [];
    lostRuns = [];
    return (yield df.callActivityWithRetry(scheduleActivities.checkpoint, activityRetry, input)) as ControlSnapshot;
  }

  // Every execution starts by reading the index (this also activates a freshly created row); the
  // first plan only tells the index the next fire time, its runs start after the read.
  latest = planTick(state, df.currentUtcDateTime);
  apply(planControl(state, yield* checkpoint(), df.currentUtcDateTime));

  for (let turn = 0; ; turn++) {
    // Runs that ended while we were busy elsewhere.
    for (const [runId, task] of [...inflight]) {
      if (!task.isCompleted && !task.isFaulted) continue;
      inflight.delete(runId);
      let outcome: RunOutcome;
      if (task.isFaulted) {
        outcome = { outcome: 'failed', reason: failureText(task) };
        lostRuns.push({ runId, reason: outcome.reason });
      } else {
        outcome = task.result as RunOutcome;
      }
      apply(planRunResult(state, runId, outcome, df.currentUtcDateTime));
    }
    if (records.length > 0 || lostRuns.length > 0) {
      apply(planControl(state, yield* checkpoint(), df.currentUtcDateTime));
      continue;
    }
    const plan = latest ?? planTick(state, df.currentUtcDateTime);
    if (plan.finished !== undefined && inflight.size === 0) {
      yield* checkpoint(plan.finished);
      return plan.finished;
    }

    const polls = duePolls(state, df.currentUtcDateTime);
    for (const run of polls) {
      const input: PollInput = {
        scheduleId: state.id,
        runId: run.runId,
        handle: run.handle ?? '',
        now: df.currentUtcDateTime.toISOString(),
      };
      inflight.set(run.runId, df.callActivityWithRetry(scheduleActivities.poll, activityRetry, input));
    }
    if (polls.length > 0)
      state = markPolled(
        state,
        polls.map((r) => r.runId),
      );

    if (turn >= executionLength && inflight.size === 0) {
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

    const wakeAt = plan.finished === undefined ? nextWake(state, df.currentUtcDateTime) : undefined;
    const timer = wakeAt === undefined ? undefined : df.createTimer(new Date(wakeAt));
    const wake = df.waitForExternalEvent(wakeEvent);
    const waitingOn: Task[] = [wake, ...inflight.values()];
    if (timer !== undefined) waitingOn.push(timer);
    const winner = (yield df.Task.any(waitingOn)) as Task;
    if (timer !== undefined && winner !== timer && !timer.isCompleted) timer.cancel();
    const now = df.currentUtcDateTime;
    latest = undefined;
    if (winner === wake || (winner === timer && now.getTime() >= Date.parse(state.checkedAt) + state.settings.recheckMs)) {
      apply(planControl(state, yield* checkpoint(), df.currentUtcDateTime));
    } else if (winner === timer) {
      apply(planTick(state, now));
    }
    // A run that ended is picked up at the top of the loop.
  }
};
