/**
 * The schedules use-cases on Azurite without a host: a service and its activities on a freshly named
 * index table, a recording engine in place of Durable Functions, and a fake Service Bus.
 */
import { randomUUID } from 'node:crypto';
import type { Telemetry } from '../../shared/telemetry/port';

import { type Clock, ManualClock, systemClock } from '../../shared/clock';
import { effectRulesOf } from '../../shared/app/ports';
import { loadAppConfig as loadConfig } from '../../shared/app/settings';
import { MemoryLogger } from '../../shared/log';
import { defaultBackoff } from '../../shared/retry';
import { ScheduleActivities } from '../../shared/schedules/activities';
import type { ScheduleEngine } from '../../shared/schedules/engine';
import type { ScheduleState } from '../../shared/schedules/machine';
import { senderDelivery } from '../../shared/schedules/scheduledDelivery';
import { ScheduleTable } from '../../shared/schedules/scheduleTable';
import { ScheduleService } from '../../shared/schedules/service';
import type { EffectPorts } from '../../shared/effects/runner';
import type { ScheduleSettings } from '../../shared/schedules/settings';
import { FakeServiceBus } from './fakeServiceBus';
import { storageFor, uniqueTableName } from './sequences';
import { runStorage } from './storageAccounts';

/** Records starts, wake-ups and status reads; `failStarts` makes the next starts throw (a crash before the start). */
class RecordingEngine implements ScheduleEngine {
  readonly started = new Map<string, ScheduleState>();
  readonly woken: string[] = [];
  failStarts = 0;

  start(id: string, input: ScheduleState): Promise<void> {
    if (this.failStarts > 0) {
      this.failStarts--;
      return Promise.reject(new Error('the Durable API is unavailable (injected)'));
    }
    // Like Durable: a running instance keeps going, a finished one (a status set here) is replaced.
    if (!this.started.has(id) || this.statuses.has(id)) {
      this.started.set(id, input);
      this.statuses.delete(id);
    }
    return Promise.resolve();
  }

  wake(id: string): Promise<boolean> {
    this.woken.push(id);
    return Promise.resolve(this.started.has(id));
  }

  /** Runtime statuses to answer, by instance id (an instance started here and not listed is `Running`). */
  readonly statuses = new Map<string, string>();
  /** The ids whose status was read, in order. */
  readonly statusReads: string[] = [];

  status(id: string): Promise<string | undefined> {
    this.statusReads.push(id);
    return Promise.resolve(this.statuses.get(id) ?? (this.started.has(id) ? 'Running' : undefined));
  }
}

export interface ScheduleHarness {
  readonly table: ScheduleTable;
  readonly tableName: string;
  readonly service: ScheduleService;
  readonly activities: ScheduleActivities;
  readonly engine: RecordingEngine;
  readonly bus: FakeServiceBus;
  readonly clock: ManualClock;
  readonly settings: ScheduleSettings;
  readonly logger: MemoryLogger;
}

export function scheduleHarness(
  options: { env?: Record<string, string>; serviceBus?: boolean; start?: Date; telemetry?: Telemetry } = {},
): ScheduleHarness {
  const storage = storageFor(runStorage());
  const tableName = uniqueTableName('sched');
  const table = new ScheduleTable(() => storage.table(tableName));
  const config = loadConfig({ AzureWebJobsStorage: runStorage(), ...options.env });
  const settings = config.schedules;
  const manual = new ManualClock(options.start ?? new Date('2027-01-01T00:00:00Z'));
  // Time is the test's; back-off sleeps (lost races) are real, so racing writers cannot deadlock.
  const clock: Clock = { now: () => manual.now(), sleep: (ms, signal) => systemClock.sleep(ms, signal) };
  const bus = new FakeServiceBus(() => clock.now());
  const engine = new RecordingEngine();
  const logger = new MemoryLogger();
  const withBus = options.serviceBus !== false;
  const backoff = { ...defaultBackoff, maxElapsedMs: 60_000 };
  const service = new ScheduleService({
    table,
    engine: () => engine,
    delivery: withBus ? senderDelivery((entity) => bus.sender(entity)) : undefined,
    settings,
    // Jobs are admitted unchecked here: there is no jobs capability, and a job run fails for want of one.
    effectRules: effectRulesOf(config, { serviceBus: withBus, jobs: { check: () => Promise.resolve() } }),
    clock,
    random: Math.random,
    logger,
    backoff,
    newId: randomUUID,
  });
  const effects: EffectPorts = {
    queue: (name) => storage.queue(name),
    serviceBusSender: (entity) => (withBus ? bus.sender(entity) : undefined),
    webhook: { allowed: [], timeoutMs: 1000, maxResponseBytes: 1024, maxRedirects: 0, allowPrivateAddresses: false },
    gates: undefined,
    jobs: undefined,
  };
  const telemetry = options.telemetry === undefined ? {} : { telemetry: options.telemetry };
  const activities = new ScheduleActivities({ table, effects, settings, clock, random: Math.random, logger, backoff, ...telemetry });
  return { table, tableName, service, activities, engine, bus, clock: manual, settings, logger };
}
