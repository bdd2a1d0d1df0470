/**
 * Releasing a generation: the entity decides (exactly once per generation), then the release is
 * pushed to every run that registered before it, in parallel batches, while the announcement (audit
 * record, this process's watchers, the Service Bus topic) goes out alongside.
 *
 * The instance id is deterministic per gate and generation, so concurrent release calls collapse into
 * one orchestration; even when they do not (a finished instance restarted), the entity answers the
 * second call "already released" and nothing is pushed twice.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { batches } from './fanout';
import {
  type AnnounceInput,
  defaultNotifyBatchSize,
  type GateReleasedEvent,
  type NotifyInput,
  type NotifyResult,
  type ReleaseInput,
  type ReleaseOutput,
  type ReleaseStatus,
} from './messages';
import { activityRetry, gateEntityId, gateFunctions } from './names';
import type { GateOperationInput, ReleaseResult } from './operations';

function statusOf(result: ReleaseResult): ReleaseStatus {
  return result.outcome === 'released' ? { outcome: 'released', gate: result.gate } : result;
}

/**
 * Releases `input.generation` and pushes the release; shared by the release orchestration and the
 * scheduled release of a generation orchestration. `report` receives the entity's answer as soon as
 * it is known (the orchestrations put it in their custom status, which the HTTP call waits for).
 */
export function* releaseGeneration(
  context: OrchestrationContext,
  input: ReleaseInput,
  report: (status: ReleaseStatus) => void,
): Generator<Task, ReleaseOutput, unknown> {
  const request: GateOperationInput<'release'> = {
    ...(input.generation === undefined ? {} : { generation: input.generation }),
    at: context.df.currentUtcDateTime.toISOString(),
    by: input.by,
    how: input.how,
    ...(input.note === undefined ? {} : { note: input.note }),
  };
  const result = (yield context.df.callEntity(gateEntityId(input.gate), 'release', request)) as ReleaseResult;
  const status = statusOf(result);
  report(status);
  if (result.outcome !== 'released' || result.gate.release === null) return { result: status, pushed: 0, gone: 0 };

  const event: GateReleasedEvent = {
    gate: input.gate,
    generation: result.gate.generation,
    release: result.gate.release,
    ...(input.trace === undefined ? {} : { trace: input.trace }),
  };
  const notify = batches(result.waiters, input.notifyBatchSize ?? defaultNotifyBatchSize).map((waiters) =>
    context.df.callActivityWithRetry(gateFunctions.notify, activityRetry, { event, waiters } satisfies NotifyInput),
  );
  const announcement: AnnounceInput = {
    kind: 'release',
    gate: result.gate,
    by: input.by,
    how: input.how,
    ...(input.note === undefined ? {} : { note: input.note }),
  };
  const announce = context.df.callActivityWithRetry(gateFunctions.announce, activityRetry, announcement);
  // Pushes first in the action list: hosts dispatch in order, and the runs are what people wait for.
  const results = (yield context.df.Task.all([...notify, announce])) as unknown[];
  const notified = results.slice(0, notify.length) as NotifyResult[];
  return {
    result: status,
    pushed: result.waiters.length,
    gone: notified.reduce((sum, r) => sum + r.gone, 0),
  };
}

export function* gateReleaseOrchestrator(context: OrchestrationContext): Generator<Task, ReleaseOutput, unknown> {
  const input = context.df.getInput<ReleaseInput>();
  return yield* releaseGeneration(context, input, (status) => context.df.setCustomStatus(status));
}
