/**
 * The gate activities' work (functions/gates.ts only binds them): pushing a release to a batch of
 * runs, announcing a create/release/reset, and performing a released run's action.
 */
import { systemClock } from '../clock';
import type { DurableClient } from '../durable/client';
import { type EffectPorts, runEffect } from '../effects/runner';
import { mapLimited } from '../mapLimited';
import { actionEffect, type GateActionResult } from './actions';
import { auditRecordOf, type GateAuditLog } from './audit';
import type { ActionInput, AnnounceInput, AnnounceResult, NotifyInput, NotifyResult } from './messages';
import { gateEvents } from './names';
import type { GateEventPublisher } from './publisher';
import type { GateWatchHub } from './watchHub';
import { gateTelemetry } from './metrics';
import { noTelemetry, type Telemetry } from '../telemetry/port';

/** Events raised at once by one notify activity. */
const notifyConcurrency = 16;

export interface NotifyDeps {
  readonly telemetry: Telemetry;
  readonly now: () => number;
}

const untimed: NotifyDeps = { telemetry: noTelemetry, now: () => systemClock.now() };

/**
 * Raises `GateReleased` on every run of the batch; runs that finished or vanished count as gone.
 * Each delivery's time since the release is the fan-out metric; the batch's span continues the release's trace.
 */
export function notifyWaiters(client: DurableClient, input: NotifyInput, deps: NotifyDeps = untimed): Promise<NotifyResult> {
  const { metrics, spans } = deps.telemetry.of(gateTelemetry);
  const gate = { 'tallyho.gate.name': input.event.gate };
  const releasedAt = Date.parse(input.event.release.at);
  const attributes = { ...gate, 'tallyho.gate.generation': String(input.event.generation) };
  return spans.notify.run({ attributes, ...(input.event.trace === undefined ? {} : { parent: input.event.trace }) }, async () => {
    const outcomes = await mapLimited(input.waiters, notifyConcurrency, async (waiter) => {
      const outcome = await client.raiseEvent(waiter, gateEvents.released, input.event);
      if (outcome === 'delivered') metrics.fanout.record(Math.max(0, deps.now() - releasedAt) / 1000, gate);
      return outcome;
    });
    const delivered = outcomes.filter((outcome) => outcome === 'delivered').length;
    return { delivered, gone: outcomes.length - delivered };
  });
}

export interface AnnounceDeps {
  readonly audit: GateAuditLog;
  readonly hub: GateWatchHub;
  readonly publisher: GateEventPublisher;
  readonly now: () => number;
  readonly telemetry?: Telemetry;
}

/** Audit row, this process's long-poll/SSE clients, then the Service Bus topic. */
export async function announce(deps: AnnounceDeps, input: AnnounceInput): Promise<AnnounceResult> {
  const { metrics } = (deps.telemetry ?? noTelemetry).of(gateTelemetry);
  const gate = { 'tallyho.gate.name': input.gate.name };
  metrics.waiting.record(input.gate.waiters.waiting, gate);
  if (input.kind === 'release') metrics.releases.add(1, { ...gate, 'tallyho.gate.release.how': input.how });
  deps.hub.publish(input.gate);
  await deps.audit.record(auditRecordOf(input, new Date(deps.now()).toISOString()));
  const published = await deps.publisher.publish(input);
  return { audited: true, published };
}

/** A released run's action, through the effects runner (the ports bound to this invocation), in the release's trace. */
export function performAction(effects: EffectPorts, input: ActionInput, telemetry: Telemetry = noTelemetry): Promise<GateActionResult> {
  const { metrics, spans } = telemetry.of(gateTelemetry);
  const type = input.action.type === 'job' ? 'job' : 'enqueue';
  const attributes = { 'tallyho.gate.name': input.gate, 'tallyho.gate.action.type': type } as const;
  return spans.action.run({ attributes, ...(input.trace === undefined ? {} : { parent: input.trace }) }, async () => {
    try {
      const result = await act(effects, input);
      metrics.actions.add(1, { 'tallyho.gate.action.type': type, 'tallyho.outcome': 'succeeded' });
      return result;
    } catch (err) {
      metrics.actions.add(1, { 'tallyho.gate.action.type': type, 'tallyho.outcome': 'failed' });
      throw err;
    }
  });
}

async function act(effects: EffectPorts, input: ActionInput): Promise<GateActionResult> {
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
