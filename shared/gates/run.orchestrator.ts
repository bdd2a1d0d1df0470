/**
 * A gated run. It registers with the gate entity first; the entity either answers "already
 * released" (a late joiner proceeds at once) or adds the run to the generation's waiting list, and
 * the release orchestration then pushes `GateReleased` to it. Registration and release are
 * serialised by the entity, so a run is either on the list the release pushes to or told it is
 * released: it cannot miss the release, and it proceeds exactly once (the orchestration completes).
 *
 * Events of an older generation are ignored. A run carried over by a reset of a closed gate
 * accepts the release of the generation it was carried into.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { type GateActionResult, needsActivity } from './actions';
import { type ActionInput, gateReleasedEventSchema, type RunInput, type RunOutput, type RunStatus } from './messages';
import { activityRetry, gateEntityId, gateEvents, gateFunctions } from './names';
import type { GateOperationInput, RegisterResult, ReleaseInfo } from './operations';

/** The release, and the releasing call's trace context when the event carried one. */
function* awaitRelease(
  context: OrchestrationContext,
  generation: number,
): Generator<Task, { release: ReleaseInfo; trace?: string }, unknown> {
  for (;;) {
    const raw: unknown = yield context.df.waitForExternalEvent(gateEvents.released);
    const event = gateReleasedEventSchema.safeParse(raw);
    if (event.success && event.data.generation >= generation) {
      return { release: event.data.release, ...(event.data.trace === undefined ? {} : { trace: event.data.trace }) };
    }
  }
}

export function* gateRunOrchestrator(context: OrchestrationContext): Generator<Task, RunOutput, unknown> {
  const input = context.df.getInput<RunInput>();
  const status = (s: RunStatus): void => context.df.setCustomStatus(s);
  const registeredAt = context.df.currentUtcDateTime.toISOString();
  status({ phase: 'registering' });

  const request: GateOperationInput<'register'> = { waiter: context.df.instanceId, maxWaiters: input.maxWaiters };
  const registration = (yield context.df.callEntity(gateEntityId(input.gate), 'register', request)) as RegisterResult;
  let release: ReleaseInfo;
  let trace: string | undefined;
  switch (registration.outcome) {
    case 'missing':
      throw new Error(`Gate "${input.gate}" does not exist`);
    case 'full':
      throw new Error(`Gate "${input.gate}" generation ${registration.generation} already has ${registration.limit} waiting runs`);
    case 'released':
      release = registration.release;
      break;
    case 'waiting':
      status({ phase: 'waiting', generation: registration.generation });
      ({ release, trace } = yield* awaitRelease(context, registration.generation));
      break;
  }

  status({ phase: 'proceeding', generation: release.generation });
  const proceededAt = context.df.currentUtcDateTime.toISOString();
  const report: GateOperationInput<'proceeded'> = { generation: release.generation, waiter: context.df.instanceId };
  context.df.signalEntity(gateEntityId(input.gate), 'proceeded', report);

  let action: GateActionResult = { type: 'none' };
  if (needsActivity(input.action)) {
    const actionInput: ActionInput = {
      gate: input.gate,
      generation: release.generation,
      runId: input.runId,
      action: input.action,
      ...(trace === undefined ? {} : { trace }),
    };
    action = (yield context.df.callActivityWithRetry(gateFunctions.action, activityRetry, actionInput)) as GateActionResult;
  }
  return {
    gate: input.gate,
    runId: input.runId,
    generation: release.generation,
    late: registration.outcome === 'released',
    release,
    registeredAt,
    proceededAt,
    action,
  };
}
