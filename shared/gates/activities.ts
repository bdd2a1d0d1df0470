/**
 * The gate activities' work (functions/gates.ts only binds them): pushing a release to a batch of
 * runs, announcing a create/release/reset, and performing a released run's action.
 */
import type { DurableClient } from '../durable/client';
import { type EffectPorts, runEffect } from '../effects/runner';
import { mapLimited } from '../mapLimited';
import { actionEffect, type GateActionResult } from './actions';
import { auditRecordOf, type GateAuditLog } from './audit';
import type { ActionInput, AnnounceInput, AnnounceResult, NotifyInput, NotifyResult } from './messages';
import { gateEvents } from './names';
import type { GateEventPublisher } from './publisher';
import type { GateWatchHub } from './watchHub';

/** Events raised at once by one notify activity. */
const notifyConcurrency = 16;

/** Raises `GateReleased` on every run of the batch; runs that finished or vanished count as gone. */
export async function notifyWaiters(client: DurableClient, input: NotifyInput): Promise<NotifyResult> {
  const outcomes = await mapLimited(input.waiters, notifyConcurrency, (waiter) =>
    client.raiseEvent(waiter, gateEvents.released, input.event),
  );
  const delivered = outcomes.filter((outcome) => outcome === 'delivered').length;
  return { delivered, gone: outcomes.length - delivered };
}

export interface AnnounceDeps {
  readonly audit: GateAuditLog;
  readonly hub: GateWatchHub;
  readonly publisher: GateEventPublisher;
  readonly now: () => number;
}

/** Audit row, this process's long-poll/SSE clients, then the Service Bus topic. */
export async function announce(deps: AnnounceDeps, input: AnnounceInput): Promise<AnnounceResult> {
  deps.hub.publish(input.gate);
  await deps.audit.record(auditRecordOf(input, new Date(deps.now()).toISOString()));
  const published = await deps.publisher.publish(input);
  return { audited: true, published };
}

/** A released run's action, through the effects runner (the ports bound to this invocation). */
export async function performAction(effects: EffectPorts, input: ActionInput): Promise<GateActionResult> {
  const run = { gate: input.gate, generation: input.generation, runId: input.runId };
  const effect = actionEffect(input.action, run);
  if (effect === undefined) return { type: 'none' };
  const outcome = await runEffect(effect, { kind: 'gateRun', ...run }, effects);
  switch (outcome.outcome) {
    case 'failed':
      // The run fails (after the activity's retries) rather than proceed as if its action had happened.
      throw new Error(`The ${effect.type} action of run ${input.runId} failed: ${outcome.reason}`);
    case 'started':
      return { type: 'job', jobId: outcome.handle };
    case 'succeeded':
      if (outcome.queued === undefined) throw new Error(`The ${effect.type} action of run ${input.runId} reported no message`);
      return { type: 'enqueue', ...outcome.queued };
  }
}
