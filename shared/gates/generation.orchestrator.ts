/**
 * Opening a generation: creating the gate (generation 1) or resetting it (generation g+1). The id is
 * deterministic per gate and generation, so two concurrent resets from g make one generation g+1.
 *
 * When the generation has a `releaseAt`, the same orchestration then holds a durable timer and
 * releases the generation when it fires. A reset cancels it by raising `GateScheduleCancelled`; and
 * should that event be lost, the release still names its generation, so the entity answers
 * `superseded` and nothing happens.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { AnnounceInput, GenerationInput, GenerationStatus, ReleaseOutput } from './messages';
import { activityRetry, gateEntityId, gateEvents, gateFunctions } from './names';
import type { CreateResult, GateOperationInput, GateSnapshot, ResetResult } from './operations';
import { releaseGeneration } from './release.orchestrator';

type Opened = GenerationStatus['opened'];

function* open(context: OrchestrationContext, input: GenerationInput): Generator<Task, Opened, unknown> {
  const at = context.df.currentUtcDateTime.toISOString();
  const entity = gateEntityId(input.gate);
  if (input.kind === 'create') {
    const request: GateOperationInput<'create'> = { name: input.gate, at, releaseAt: input.releaseAt };
    const result = (yield context.df.callEntity(entity, 'create', request)) as CreateResult;
    return { outcome: result.created ? 'created' : 'exists', gate: result.gate };
  }
  const request: GateOperationInput<'reset'> = { fromGeneration: input.fromGeneration ?? 1, at, releaseAt: input.releaseAt };
  const result = (yield context.df.callEntity(entity, 'reset', request)) as ResetResult;
  if (result.outcome === 'missing') return { outcome: 'missing' };
  return result.outcome === 'reset'
    ? { outcome: 'reset', gate: result.gate, carried: result.carried }
    : { outcome: 'alreadyReset', gate: result.gate };
}

export interface GenerationOutput {
  readonly opened: Opened;
  readonly release?: ReleaseOutput;
  readonly scheduleCancelled?: boolean;
}

export function* gateGenerationOrchestrator(context: OrchestrationContext): Generator<Task, GenerationOutput, unknown> {
  const input = context.df.getInput<GenerationInput>();
  const opened = yield* open(context, input);
  let status: GenerationStatus = { opened };
  context.df.setCustomStatus(status);
  const gate: GateSnapshot | undefined = opened.gate;
  if ((opened.outcome !== 'created' && opened.outcome !== 'reset') || gate === undefined) return { opened };

  const announcement: AnnounceInput = {
    kind: input.kind,
    gate,
    by: input.by,
    how: 'api',
    ...(input.note === undefined ? {} : { note: input.note }),
  };
  yield context.df.callActivityWithRetry(gateFunctions.announce, activityRetry, announcement);
  if (gate.releaseAt === null) return { opened };

  status = { ...status, schedule: 'waiting' };
  context.df.setCustomStatus(status);
  const timer = context.df.createTimer(new Date(gate.releaseAt));
  const cancelled = context.df.waitForExternalEvent(gateEvents.scheduleCancelled);
  const winner = (yield context.df.Task.any([timer, cancelled])) as Task;
  if (winner !== timer) {
    // A pending timer would keep the instance running until it fires.
    timer.cancel();
    context.df.setCustomStatus({ ...status, schedule: 'cancelled' });
    return { opened, scheduleCancelled: true };
  }
  status = { ...status, schedule: 'fired' };
  const release = yield* releaseGeneration(
    context,
    { gate: input.gate, generation: gate.generation, by: input.by, how: 'schedule', notifyBatchSize: input.notifyBatchSize },
    (result) => context.df.setCustomStatus({ ...status, release: result }),
  );
  return { opened, release };
}
