/**
 * What follows a release, crash-safe: the release call starts this orchestration (instance id per
 * gate and generation) before it writes the release, so a host that dies in between leaves the
 * release to this orchestration, whose first activities make it with the caller's who and when;
 * otherwise they find the caller's release. It publishes the release and performs the actions of
 * the runs the release let go, in parallel batches over the run key ranges — at once, or, when the
 * caller fans them out itself (fanOut.ts), as a sweep once the caller's lease on that ended or lapsed,
 * which performs only what it left (after a clean end, one batch that only looks).
 * Runs without an action cost nothing here: their state is derived from the release itself.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type {
  ActionBatchInput,
  ActionBatchResult,
  ActionsOutput,
  FanOutState,
  FanOutStateInput,
  ReleaseFollowUp,
  ReleaseOutput,
} from './messages';
import { actionRetryDelaysSeconds, activityRetry, fanOutMaxWaitSeconds, gateFunctions, runShards } from './names';

/**
 * The run key shards of each parallel batch: about one batch per `batchSize` runs, as 1, 2, 4, 8 or
 * 16 equal, contiguous ranges of shards (each one range query).
 */
export function shardGroups(actions: number, batchSize: number): (readonly [number, number])[] {
  const wanted = Math.ceil(actions / Math.max(1, batchSize));
  let groups = 1;
  while (groups < wanted && groups < runShards) groups *= 2;
  const width = runShards / groups;
  return Array.from({ length: groups }, (_, g) => [g * width, (g + 1) * width] as const);
}

const unavailable = { code: 'DependencyUnavailable', reason: 'The action could not be performed: a dependency stayed unavailable' };

/**
 * Runs `batches` until no run is left pending, pausing between rounds; after the last pause it
 * records what is still pending as failed with the last reason a batch gave. `alongside` (e.g. the
 * announcement) runs with the first round.
 */
export function* untilSettled(
  context: OrchestrationContext,
  batches: readonly ActionBatchInput[],
  more: (result: ActionBatchResult) => boolean,
  alongside: readonly Task[] = [],
  confirm?: ReleaseFollowUp,
): Generator<Task, ActionsOutput & { readonly missing: readonly string[] }, unknown> {
  let pending = [...batches];
  let done = 0;
  let failed = 0;
  let missing: readonly string[] = [];
  let lastError: { code: string; reason: string } = unavailable;
  for (let round = 0; ; round++) {
    const giveUp = round > actionRetryDelaysSeconds.length;
    const inputs = pending.map((b) => ({
      ...b,
      ...(giveUp ? { giveUp: lastError } : {}),
      // Until a round has run, the release may not be made yet.
      ...(confirm !== undefined && round === 0 ? { confirm } : {}),
    }));
    let results: ActionBatchResult[];
    const extra = round === 0 ? alongside : [];
    try {
      const all = (yield context.df.Task.all([
        ...inputs.map((b) => context.df.callActivityWithRetry(gateFunctions.actions, activityRetry, b)),
        ...extra,
      ])) as unknown[];
      results = all.slice(0, inputs.length) as ActionBatchResult[];
    } catch {
      // A batch failed even after its retries: try every batch of the round again (recorded outcomes are skipped).
      results = inputs.map(() => ({ done: 0, failed: 0, retry: 1, missing: [], lastError: unavailable }));
    }
    const next: ActionBatchInput[] = [];
    results.forEach((r, i) => {
      done += r.done;
      failed += r.failed;
      if (r.lastError !== undefined) lastError = r.lastError;
      missing = r.missing;
      if (more(r)) next.push(pending[i] as ActionBatchInput);
    });
    if (next.length === 0 || giveUp) return { done, failed, abandoned: 0, missing };
    pending = next;
    const pause = actionRetryDelaysSeconds[round] ?? 60;
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + pause * 1000));
  }
}

/**
 * Waits while the caller's fan-out holds its lease: first for the lease's length (announcing
 * meanwhile), then, while it is renewed, for what it has left. Its state at the end: `ended` (cleanly
 * or not), or `none` (it lapsed or was never written) — also when reading it failed even after its
 * retries, or after `fanOutMaxWaitSeconds` (the sweep is safe at any time; waiting only spares sends).
 */
function* afterFanOut(
  context: OrchestrationContext,
  input: ReleaseFollowUp,
  leaseSeconds: number,
  announce: readonly Task[],
): Generator<Task, FanOutState, unknown> {
  const at = (seconds: number): Date => new Date(context.df.currentUtcDateTime.getTime() + seconds * 1000);
  const giveUpAt = at(fanOutMaxWaitSeconds).getTime();
  try {
    yield context.df.Task.all([context.df.createTimer(at(leaseSeconds)), ...announce]);
  } catch {
    // The announcement failed after its retries (as in the batches' first round, the actions still follow).
    yield context.df.createTimer(at(leaseSeconds));
  }
  const which: FanOutStateInput = { gate: input.gate, generation: input.generation };
  for (;;) {
    let state: FanOutState;
    try {
      state = (yield context.df.callActivityWithRetry(gateFunctions.fanOutState, activityRetry, which)) as FanOutState;
    } catch {
      return { state: 'none' };
    }
    if (state.state !== 'running' || context.df.currentUtcDateTime.getTime() >= giveUpAt) return state;
    // A second past its end: a renewal written meanwhile is seen, a lapse is past.
    yield context.df.createTimer(at(state.seconds + 1));
  }
}

export function* gateReleaseOrchestrator(context: OrchestrationContext): Generator<Task, ReleaseOutput, unknown> {
  const input = context.df.getInput<ReleaseFollowUp>();
  const announce = input.announce ? [context.df.callActivityWithRetry(gateFunctions.announceRelease, activityRetry, input)] : [];
  if (input.actions === 0) {
    yield context.df.Task.all(announce);
    return { outcome: 'released' };
  }
  // Every first batch makes (or finds) the release before its actions: no step of its own ahead of them.
  const batchOf = (shards: readonly [number, number]): ActionBatchInput => ({
    gate: input.gate,
    generation: input.generation,
    selection: { kind: 'released', shards, from: input.from },
    ...(input.trace === undefined ? {} : { trace: input.trace }),
  });
  let batches = shardGroups(input.actions, input.batchSize).map(batchOf);
  let alongside = announce;
  if (input.fanOutLeaseSeconds !== undefined) {
    const fanOut = yield* afterFanOut(context, input, input.fanOutLeaseSeconds, announce);
    // A clean end left nothing pending: one batch over every shard confirms it (and performs any it missed).
    if (fanOut.state === 'ended' && fanOut.clean) batches = [batchOf([0, runShards])];
    alongside = [];
  } else if (input.sweepAfterSeconds !== undefined) {
    // The caller is fanning the actions out: announce now, sweep what it left once it should be done.
    const sweepAt = new Date(context.df.currentUtcDateTime.getTime() + input.sweepAfterSeconds * 1000);
    try {
      yield context.df.Task.all([context.df.createTimer(sweepAt), ...announce]);
    } catch {
      // The announcement failed after its retries (as in the batches' first round, the actions still
      // follow); the sweep still waits for the caller's fan-out.
      yield context.df.createTimer(sweepAt);
    }
    alongside = [];
  }
  const actions = yield* untilSettled(context, batches, (r) => r.retry > 0, alongside, input);
  return { outcome: 'released', actions: { done: actions.done, failed: actions.failed, abandoned: 0 } };
}
