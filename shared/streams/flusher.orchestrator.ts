/**
 * The flusher: one eternal orchestration per writer (entities can neither do I/O nor set timers).
 * Each round it asks the writer for a plan, carries it out, and continues as new, so its history
 * stays a handful of events however long it runs:
 *
 * - `open`: pick the blob the log starts in (activity), tell the writer.
 * - `taken`: the writer took a batch out of its buffer in this very step; it hands it out from the
 *   next one, once that step's state is stored (writerCheckpoint.ts): plan again at once.
 * - `flush`: append the batch (activity) and confirm it to the writer; on failure, report it and
 *   let the writer's back-off decide when the same batch is tried again.
 * - `wait` / `idle` / `backoff`: sleep on a durable timer until the plan's time, or until a caller
 *   raises `kick` (the buffer became non-empty, reached N, or a flush was asked for).
 * - `retire`: the writer has been idle a whole recheck interval; the flusher ends (the writer
 *   answers the next append with `restart`, and that appender starts a new flusher).
 *
 * A kick is only a hint: the plan is always read from the writer, so a lost or repeated kick changes
 * nothing but timing.
 */
import type { OrchestrationContext, OrchestrationHandler } from 'durable-functions';

import { parseWriterKey, streamsDurable, writerEntity, writerOps } from './names';
import type { FlushOutcome, FlushPlan, LogCursor } from './writerState';

export interface FlusherInput {
  /** The writer's key, `partition:resource`. */
  readonly key: string;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** After an unexpected failure of a round (the writer or an activity could not be reached), wait this long. */
const failedRoundDelayMs = 5000;

export const streamsFlusherOrchestrator: OrchestrationHandler = function* (context: OrchestrationContext) {
  const input = context.df.getInput<FlusherInput>();
  const writer = writerEntity(input.key);
  const now = context.df.currentUtcDateTime.getTime();
  let retired = false;
  try {
    const plan = (yield context.df.callEntity(writer, writerOps.plan, { now })) as FlushPlan;
    switch (plan.kind) {
      case 'open': {
        const cursor = (yield context.df.callActivity(streamsDurable.openActivity, parseWriterKey(input.key))) as LogCursor;
        yield context.df.callEntity(writer, writerOps.opened, { cursor });
        break;
      }
      case 'flush': {
        try {
          const outcome = (yield context.df.callActivity(streamsDurable.appendActivity, plan.batch)) as FlushOutcome;
          yield context.df.callEntity(writer, writerOps.flushed, outcome);
        } catch (err) {
          // The writer keeps the batch in flight and decides when the same batch is tried again.
          yield context.df.callEntity(writer, writerOps.flushFailed, { batchId: plan.batch.id, message: errorMessage(err), at: now });
        }
        break;
      }
      case 'taken':
        break;
      case 'retire':
        // Nothing to flush for a whole idle round: end, so an unused writer costs no timers.
        retired = true;
        break;
      case 'wait':
      case 'idle':
      case 'backoff': {
        const timer = context.df.createTimer(new Date(Math.max(plan.until, now)));
        const kicked = context.df.waitForExternalEvent(streamsDurable.kickEvent);
        const winner: unknown = yield context.df.Task.any([timer, kicked]);
        if (winner !== timer) timer.cancel();
        break;
      }
    }
  } catch (err) {
    // Never end: a failed flusher would leave its writer unflushed until a caller restarts it.
    if (!context.df.isReplaying) context.warn(`streams flusher ${input.key}: ${errorMessage(err)}`);
    yield context.df.createTimer(new Date(now + failedRoundDelayMs));
  }
  if (!retired) context.df.continueAsNew(input);
};
