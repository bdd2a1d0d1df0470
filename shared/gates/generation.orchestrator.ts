/**
 * What follows opening a generation (creating a gate, or resetting it), crash-safe: started before
 * the change is committed, it first finds whether the change committed (it looks again for a while:
 * it may be early) and with which schedule, then publishes it and, when the generation has a
 * `releaseAt`, holds a durable timer and releases the generation when it fires — through the same
 * release use-case as the API.
 *
 * The instance id names the generation and its schedule, so a create or reset that lost to a
 * concurrent one with another schedule has an orchestration of its own, which finds the other
 * schedule and stops. A reset cancels the pending schedule by raising `GateScheduleCancelled`; should
 * that event be lost, the release still names its generation, and a gate that moved on refuses it.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { AnnounceInput, GenerationFollowUp, GenerationOutput, OpenedInput, OpenedResult, ScheduledReleaseInput } from './messages';
import { activityRetry, gateEvents, gateFunctions, lateRegistrationWaitSeconds } from './names';

export function* gateGenerationOrchestrator(context: OrchestrationContext): Generator<Task, GenerationOutput, unknown> {
  const input = context.df.getInput<GenerationFollowUp>();
  const look: OpenedInput = { gate: input.gate, kind: input.kind, generation: input.generation, releaseAt: input.releaseAt };
  let opened: OpenedResult;
  for (let n = 0; ; n++) {
    opened = (yield context.df.callActivityWithRetry(gateFunctions.opened, activityRetry, look)) as OpenedResult;
    if (opened.opened !== 'absent') break;
    if (n >= lateRegistrationWaitSeconds.length) return { opened: 'abandoned' };
    const pause = lateRegistrationWaitSeconds[n] ?? 60;
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + pause * 1000));
  }
  if (opened.opened === 'other' || opened.gate === undefined) return { opened: 'other' };

  if (input.announce) {
    const announcement: AnnounceInput = {
      kind: input.kind,
      gate: opened.gate,
      by: input.by,
      how: 'api',
      ...(input.note === undefined ? {} : { note: input.note }),
    };
    yield context.df.callActivityWithRetry(gateFunctions.announce, activityRetry, announcement);
  }
  if (input.releaseAt === null) return { opened: 'opened' };

  const timer = context.df.createTimer(new Date(input.releaseAt));
  const cancelled = context.df.waitForExternalEvent(gateEvents.scheduleCancelled);
  const winner = (yield context.df.Task.any([timer, cancelled])) as Task;
  if (winner !== timer) {
    // A pending timer would keep the instance running until it fires.
    timer.cancel();
    return { opened: 'opened', schedule: 'cancelled' };
  }
  const at = context.df.currentUtcDateTime.toISOString();
  const release: ScheduledReleaseInput = { gate: input.gate, generation: input.generation, by: input.by, at };
  const outcome = (yield context.df.callActivityWithRetry(gateFunctions.scheduledRelease, activityRetry, release)) as string;
  return { opened: 'opened', schedule: 'fired', release: outcome };
}
