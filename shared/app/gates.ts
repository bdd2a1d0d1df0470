/** The composition root's wiring of the gates capability. */
import type { DurableClient } from '../durable/client';
import type { DurableClientSource } from '../durable/source';
import type { EffectRules } from '../effects/admission';
import type { EffectPorts } from '../effects/runner';
import type { GateActionResult } from '../gates/actions';
import { announce, notifyWaiters, performAction } from '../gates/activities';
import { GateAuditLog } from '../gates/audit';
import type { ActionInput, AnnounceInput, AnnounceResult, NotifyInput, NotifyResult } from '../gates/messages';
import { GateEventPublisher } from '../gates/publisher';
import { GateService } from '../gates/service';
import type { WaitingDeps } from '../gates/waiting';
import { GateWatchHub } from '../gates/watchHub';
import type { ServiceBusSenders } from '../messaging/serviceBus';
import { serviceBusEntities, tables } from '../resources';
import type { StorageClients } from '../storage/clients';
import { gateActionCheck } from './ports';
import type { Runtime } from './runtime';
import type { AppConfig } from './settings';

export interface GatesCapability {
  /** The gate use-cases on a Durable client (the invocation's; the hub reads through the app's source). */
  service(client: DurableClient): GateService;
  /** This instance's one read loop per watched gate, for long polls and event streams. */
  readonly hub: GateWatchHub;
  readonly audit: GateAuditLog;
  readonly waiting: WaitingDeps;
  /** The activities: push a release to a batch of runs, announce a change, perform a released run's action. */
  notify(client: DurableClient, input: NotifyInput): Promise<NotifyResult>;
  announce(input: AnnounceInput): Promise<AnnounceResult>;
  act(input: ActionInput): Promise<GateActionResult>;
}

export function gatesOf(
  config: AppConfig,
  storage: StorageClients,
  serviceBus: ServiceBusSenders,
  runtime: Runtime,
  durable: DurableClientSource,
  effectRules: EffectRules,
  /** A gate run's action gets no Durable client: none of the effects it may make (none, enqueue, job) needs one. */
  effects: (client: DurableClient | undefined) => EffectPorts,
): GatesCapability {
  const settings = config.gates;
  const known = new Set<string>();
  const checkAction = gateActionCheck(effectRules);
  const service = (client: DurableClient): GateService =>
    new GateService({ ...runtime, durable: () => client, hub, settings, checkAction, known });
  // The watchers outlive the request that started them, so they read through the app's source.
  const hub: GateWatchHub = new GateWatchHub((name) => service(durable.client()).read(name), {
    intervalMs: settings.watchIntervalMs,
    clock: runtime.clock,
    logger: runtime.logger,
  });
  const audit = new GateAuditLog(() => storage.table(tables.gateAudit));
  const publisher = new GateEventPublisher(() => serviceBus.sender(serviceBusEntities.topics.gateEvents), runtime.logger);
  return {
    service,
    hub,
    audit,
    waiting: { hub, settings, clock: runtime.clock, random: runtime.random },
    notify: (client, input) => notifyWaiters(client, input, { telemetry: runtime.telemetry, now: () => runtime.clock.now() }),
    announce: (input) => announce({ audit, hub, publisher, now: () => runtime.clock.now(), telemetry: runtime.telemetry }, input),
    act: (input) => performAction(effects(undefined), input, runtime.telemetry),
  };
}
