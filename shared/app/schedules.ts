/** The composition root's wiring of the schedules capability. */
import type { DurableClient } from '../durable/client';
import type { EffectRules } from '../effects/admission';
import type { EffectPorts } from '../effects/runner';
import type { ServiceBusSenders } from '../messaging/serviceBus';
import { tables } from '../resources';
import { ScheduleActivities } from '../schedules/activities';
import { durableScheduleEngine } from '../schedules/engine';
import { senderDelivery } from '../schedules/scheduledDelivery';
import { ScheduleTable } from '../schedules/scheduleTable';
import { ScheduleService } from '../schedules/service';
import type { StorageClients } from '../storage/clients';
import type { Runtime } from './runtime';
import type { AppConfig } from './settings';

export interface SchedulesCapability {
  /** The schedule use-cases on the Durable client of the invocation being served. */
  service(client: DurableClient): ScheduleService;
  /** The orchestration's activities; a run's target needs the invocation's client (a gate release goes through Durable). */
  activities(client?: DurableClient): ScheduleActivities;
}

export function schedulesOf(
  config: AppConfig,
  storage: StorageClients,
  serviceBus: ServiceBusSenders,
  runtime: Runtime,
  effectRules: EffectRules,
  effects: (client: DurableClient | undefined) => EffectPorts,
): SchedulesCapability {
  const settings = config.schedules;
  const table = new ScheduleTable(() => storage.table(tables.schedules));
  const delivery = config.serviceBus === undefined ? undefined : senderDelivery((entity) => serviceBus.sender(entity));
  return {
    service: (client) =>
      new ScheduleService({ ...runtime, table, engine: () => durableScheduleEngine(client), delivery, settings, effectRules }),
    activities: (client) => new ScheduleActivities({ ...runtime, table, effects: effects(client), settings }),
  };
}
