/**
 * The gates capability's front door: `createGates(deps)` builds every part of it from named ports
 * (its table, the Service Bus sender of its topic, the effects a released run's action may make, the
 * check of a run's action), and what the app and functions/ use of it is exported here.
 *
 * - `reader`: reads of gates and runs (no Durable client);
 * - `commands(client)`: create, release, reset, start a run, a scheduled release — each on the
 *   Durable client of the invocation it serves, which starts what follows the change;
 * - `activities`: the orchestrations' steps (announce, find a change committed, perform actions);
 * - `hub`, `waiting`, `audit`: long polls and event streams, the audit log.
 */
import type { TableClient } from '@azure/data-tables';

import type { DurableClient } from '../durable/client';
import type { EffectPorts } from '../effects/runner';
import { retryContextOf } from '../retry';
import { type ActionBatchInput, type ActionBatchResult, performActionBatch } from './actionRunner';
import type { GateAction } from './actions';
import { announce, announceRelease, fanOutState, findOpened } from './activities';
import { GateAuditLog } from './audit';
import { ReleaseFanOut } from './fanOut';
import type {
  AnnounceInput,
  AnnounceResult,
  FanOutState,
  FanOutStateInput,
  OpenedInput,
  OpenedResult,
  ReleaseFollowUp,
  ScheduledReleaseInput,
} from './messages';
import { type GateEventSender, GateEventPublisher } from './publisher';
import { GateReader } from './reader';
import { GateRegistrar } from './registrar';
import { GateReleases } from './releases';
import { startLateActions } from './lateActions';
import type { ResetOutcome } from './operations';
import { GateCommands } from './service';
import type { GateSettings } from './settings';
import { GateStore } from './store';
import type { WaitingDeps } from './waiting';
import { GateWatchHub } from './watchHub';
import type { Runtime } from '../runtime';

export { gatesRoutes } from './routes';
export type { GateAction } from './actions';
export type { GateReader } from './reader';
export type { GateCommands } from './service';

/** With the runtime every service shares (clock, random, logger, telemetry, back-off, ids). */
export interface GatesDeps extends Runtime {
  readonly settings: GateSettings;
  /** The `gates` table: gate rows, runs, releases and audit records. */
  readonly table: () => Promise<TableClient>;
  /** The sender of the `gate-events` topic; undefined without Service Bus (changes are then not published). */
  readonly eventSender: () => GateEventSender | undefined;
  /** What a released run's action may make happen (none, enqueue, a job): none of them needs a Durable client. */
  readonly effects: EffectPorts;
  /** Checks a run's action before the run starts (a job action gets the jobs API's checks). */
  readonly checkAction: (action: GateAction) => Promise<void>;
  /**
   * Whether the instance that makes a release fans its actions out itself (fanOut.ts; the default),
   * or leaves them to the release orchestration's batches (tests that drive those themselves).
   */
  readonly directFanOut?: boolean;
}

/** The orchestrations' activities (functions/gates.ts binds them). */
interface GateActivities {
  announce(input: AnnounceInput): Promise<AnnounceResult>;
  announceRelease(input: ReleaseFollowUp): Promise<AnnounceResult | undefined>;
  opened(input: OpenedInput): Promise<OpenedResult>;
  actions(input: ActionBatchInput): Promise<ActionBatchResult>;
  fanOutState(input: FanOutStateInput): Promise<FanOutState>;
  /** A generation's scheduled release, on the activity's own Durable client (it may start the release orchestration). */
  scheduledRelease(client: DurableClient, input: ScheduledReleaseInput): Promise<string>;
}

export interface Gates {
  readonly reader: GateReader;
  /** The commands on the Durable client of the invocation being served. */
  commands(client: DurableClient): GateCommands;
  readonly activities: GateActivities;
  /** This instance's release fan-outs: `settled()` once none is under way. */
  readonly fanOuts: { settled(): Promise<void> };
  /** This instance's one read loop per watched gate, for long polls and event streams. */
  readonly hub: GateWatchHub;
  readonly waiting: WaitingDeps;
  readonly audit: GateAuditLog;
}

export function createGates(deps: GatesDeps): Gates {
  const { settings, clock, logger, telemetry } = deps;
  const store = new GateStore(deps.table);
  const audit = new GateAuditLog(deps.table);
  const publisher = new GateEventPublisher(deps.eventSender, logger);
  const retry = (subject: string) => retryContextOf(deps, subject);
  // One registrar per app instance: concurrent starts of every request are committed together.
  const registrar = new GateRegistrar({
    store,
    clock,
    retry: (gate) => retry(`gate ${gate}`),
    maxWaiters: () => settings.maxWaiters,
    beforeLateActions: startLateActions,
  });
  const reader = new GateReader({ store, telemetry });
  const hub = new GateWatchHub((name) => reader.read(name), { intervalMs: settings.watchIntervalMs, clock, logger });
  const releases = new GateReleases({ store, registrar, hub, retry, telemetry, logger });
  const resetsInFlight = new Map<string, Promise<ResetOutcome>>();
  const announceDeps = { hub, publisher, confirmRelease: (input: ReleaseFollowUp) => releases.confirmRelease(input) };
  const actionDeps = {
    store,
    confirmRelease: announceDeps.confirmRelease,
    effects: deps.effects,
    now: () => clock.now(),
    logger,
    telemetry,
  };
  // One per app instance, like the registrar: the fan-outs under way on it.
  const fanOut = deps.directFanOut === false ? undefined : new ReleaseFanOut(actionDeps, logger);
  const commands = (durable: DurableClient): GateCommands =>
    new GateCommands({
      ...deps,
      durable,
      store,
      reader,
      releases,
      registrar,
      hub,
      retry,
      announces: () => publisher.configured(),
      resetsInFlight,
      fanOut,
    });
  return {
    reader,
    commands,
    fanOuts: { settled: () => fanOut?.settled() ?? Promise.resolve() },
    hub,
    audit,
    waiting: { hub, settings, clock, random: deps.random, logger },
    activities: {
      announce: (input) => announce(announceDeps, input),
      announceRelease: (input) => announceRelease(announceDeps, input),
      opened: (input) => findOpened({ audit, store }, input),
      actions: (input) => performActionBatch(actionDeps, input),
      fanOutState: (input) => fanOutState(actionDeps, input),
      scheduledRelease: (client, input) => commands(client).scheduledRelease(input),
    },
  };
}
