/**
 * Runs with an action that register after the release proceed at once, and this orchestration
 * performs their actions. The registration starts it before committing the runs, so a crash between
 * the two cannot leave a registered run whose action nobody performs. It may therefore look before
 * the runs exist: it looks again for a while, then gives up on runs that never registered (their
 * start failed, and the caller was told so).
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { ActionBatchInput, ActionsOutput, LateActionsInput } from './messages';
import { lateRegistrationWaitSeconds } from './names';
import { untilSettled } from './release.orchestrator';

export function* gateLateActionsOrchestrator(context: OrchestrationContext): Generator<Task, ActionsOutput, unknown> {
  const input = context.df.getInput<LateActionsInput>();
  let runIds = input.runIds;
  let done = 0;
  let failed = 0;
  for (let look = 0; ; look++) {
    const batch: ActionBatchInput = { gate: input.gate, generation: input.generation, selection: { kind: 'late', runIds } };
    const result = yield* untilSettled(context, [batch], (r) => r.retry > 0);
    done += result.done;
    failed += result.failed;
    if (result.missing.length === 0) return { done, failed, abandoned: 0 };
    if (look >= lateRegistrationWaitSeconds.length) return { done, failed, abandoned: result.missing.length };
    runIds = result.missing;
    const pause = lateRegistrationWaitSeconds[look] ?? 60;
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + pause * 1000));
  }
}
