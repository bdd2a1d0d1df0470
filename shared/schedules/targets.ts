/**
 * Running a schedule's target once: the target is an effect (shared/effects), run by the one effects
 * runner under the run's origin, so what it sends carries the schedule and run ids and its key is
 * the run id (`effectKey`). Failures of the target itself are outcomes, recorded with the run;
 * failures a retry may fix are thrown, so the activity is retried with back-off.
 */
import type { Effect, EffectOutcome, EffectOrigin } from '../effects/effect';
import { type EffectPorts, pollEffect, runEffect } from '../effects/runner';
import type { Telemetry } from '../telemetry/port';
import { type Creator, describeCreator } from './creator';
import type { Target } from './definition';
import type { Fire } from './policies';

export interface RunContext {
  readonly scheduleId: string;
  readonly runId: string;
  readonly fire: Fire;
  readonly createdBy: Creator | undefined;
}

/** How a target's run went, as the schedule records it (a queue message's id is in `detail`). */
export type TargetOutcome =
  | { readonly outcome: 'succeeded'; readonly detail?: string }
  | { readonly outcome: 'failed'; readonly reason: string }
  | { readonly outcome: 'started'; readonly handle: string };

/** The effect a target asks for (the API's `queueMessage` is the effects' `enqueue`). */
export function targetEffect(target: Target): Effect {
  switch (target.type) {
    case 'queueMessage':
      return { type: 'enqueue', queue: target.queue, message: target.message };
    case 'serviceBus':
      return {
        type: 'serviceBus',
        entity: target.entity,
        message: target.message,
        ...(target.sessionId === undefined ? {} : { sessionId: target.sessionId }),
      };
    case 'webhook':
    case 'gateRelease':
    case 'job':
      return target;
  }
}

function originOf(ctx: RunContext): EffectOrigin {
  return {
    kind: 'scheduleRun',
    scheduleId: ctx.scheduleId,
    runId: ctx.runId,
    scheduledFor: ctx.fire.at,
    fireKind: ctx.fire.kind,
    createdBy: describeCreator(ctx.createdBy),
    // A job the run submits belongs to the schedule's owner (none recorded: the job is an admin's only).
    ...(ctx.createdBy?.owner === undefined ? {} : { owner: ctx.createdBy.owner }),
  };
}

function recorded(outcome: EffectOutcome): TargetOutcome {
  if (outcome.outcome !== 'succeeded') return outcome;
  return { outcome: 'succeeded', ...(outcome.detail === undefined ? {} : { detail: outcome.detail }) };
}

export async function runTarget(target: Target, ctx: RunContext, ports: EffectPorts, telemetry?: Telemetry): Promise<TargetOutcome> {
  return recorded(await runEffect(targetEffect(target), originOf(ctx), ports, telemetry));
}

/** Asks a target that completes later (a job) how its run is going. */
export async function pollTarget(
  target: Target,
  handle: string,
  ports: EffectPorts,
): Promise<TargetOutcome | { readonly outcome: 'running' }> {
  const outcome = await pollEffect(targetEffect(target), handle, ports);
  return outcome.outcome === 'running' ? outcome : recorded(outcome);
}
