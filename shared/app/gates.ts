/** The composition root's wiring of the gates capability. */
import type { DurableClient } from '../durable/client';
import type { DurableClientSource } from '../durable/source';
import type { EffectRules } from '../effects/admission';
import type { EffectPorts } from '../effects/runner';
import { type ActionBatchInput, type ActionBatchResult, performActionBatch } from '../gates/actionRunner';
import { announce, announceRelease, findOpened } from '../gates/activities';
import { GateAuditLog } from '../gates/audit';
import type { AnnounceInput, AnnounceResult, OpenedInput, OpenedResult, ReleaseFollowUp, ScheduledReleaseInput } from '../gates/messages';
import { GateEventPublisher } from '../gates/publisher';
import { GateRegistrar } from '../gates/registrar';
import { type ResetOutcome, GateService, lateActionsStarter } from '../gates/service';
import { GateStore } from '../gates/store';
import type { WaitingDeps } from '../gates/waiting';
import { GateWatchHub } from '../gates/watchHub';
import type { ServiceBusSenders } from '../messaging/serviceBus';
import { serviceBusEntities, tables } from '../resources';
import { retryContextOf } from '../retry';
import type { StorageClients } from '../storage/clients';
import { gateActionCheck } from './ports';
import type { Runtime } from './runtime';
import type { AppConfig } from './settings';

export interface GatesCapability {
  /**
   * The gate use-cases. A use-case that may start Durable work (create, release, reset, a run start)
   * is given the invocation's client; reads need none.
   */
  service(client?: DurableClient): GateService;
  /** This instance's one read loop per watched gate, for long polls and event streams. */
  readonly hub: GateWatchHub;
  readonly audit: GateAuditLog;
  readonly waiting: WaitingDeps;
  /** The activities: announce a change, find a create or reset committed, perform a batch of actions, a scheduled release. */
  announce(input: AnnounceInput): Promise<AnnounceResult>;
  announceRelease(input: ReleaseFollowUp): Promise<AnnounceResult | undefined>;
  opened(input: OpenedInput): Promise<OpenedResult>;
  actions(input: ActionBatchInput): Promise<ActionBatchResult>;
  scheduledRelease(client: DurableClient, input: ScheduledReleaseInput): Promise<string>;
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
  const table = () => storage.table(tables.gates);
  const store = new GateStore(table);
  const audit = new GateAuditLog(table);
  const publisher = new GateEventPublisher(() => serviceBus.sender(serviceBusEntities.topics.gateEvents), runtime.logger);
  const retry = (subject: string) => retryContextOf(runtime, subject);
  // One registrar per app instance: concurrent starts of every request are committed together. Late
  // joiners' actions are started with any client this instance has (run starts offer theirs).
  const registrar = new GateRegistrar({
    store,
    clock: runtime.clock,
    retry: (gate) => retry(`gate ${gate}`),
    maxWaiters: () => settings.maxWaiters,
    beforeLateActions: lateActionsStarter(() => durable.client()),
  });
  const checkAction = gateActionCheck(effectRules);
  const resetsInFlight = new Map<string, Promise<ResetOutcome>>();
  const service = (client?: DurableClient): GateService =>
    new GateService({
      ...runtime,
      durable: () => client ?? durable.client(),
      store,
      registrar,
      hub,
      settings,
      retry,
      checkAction,
      announces: () => publisher.configured(),
      resetsInFlight,
    });
  const hub: GateWatchHub = new GateWatchHub((name) => service().read(name), {
    intervalMs: settings.watchIntervalMs,
    clock: runtime.clock,
    logger: runtime.logger,
  });
  const announceDeps = { hub, publisher, confirmRelease: (input: ReleaseFollowUp) => service().confirmRelease(input) };
  return {
    service,
    hub,
    audit,
    waiting: { hub, settings, clock: runtime.clock, random: runtime.random, logger: runtime.logger },
    announce: (input) => announce(announceDeps, input),
    announceRelease: (input) => announceRelease(announceDeps, input),
    opened: (input) => findOpened({ audit, store }, input),
    actions: (input) =>
      performActionBatch(
        {
          store,
          confirmRelease: (follow) => service().confirmRelease(follow),
          effects: effects(undefined),
          now: () => runtime.clock.now(),
          logger: runtime.logger,
          telemetry: runtime.telemetry,
        },
        input,
      ),
    scheduledRelease: (client, input) => service(client).scheduledRelease(input),
  };
}
