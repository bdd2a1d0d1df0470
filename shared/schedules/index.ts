/**
 * The schedules capability's front door: `createSchedules(deps)` builds it from named ports (its
 * table, the Service Bus senders a scheduled delivery uses, what a run's target may do and the ports
 * it runs through) and hands out the use-cases and the orchestration's activities, each on the
 * Durable client of the invocation it serves.
 */
import type { TableClient } from '@azure/data-tables';

import type { DurableClient } from '../durable/client';
import type { EffectRules } from '../effects/admission';
import type { EffectPorts } from '../effects/runner';
import { ScheduleActivities } from './activities';
import { durableScheduleEngine } from './engine';
import { type ScheduleSender, senderDelivery } from './scheduledDelivery';
import { ScheduleTable } from './scheduleTable';
import { ScheduleService } from './service';
import type { ScheduleSettings } from './settings';
import type { Runtime } from '../runtime';

export { schedulesRoutes } from './routes';

/** With the runtime every service shares (clock, random, logger, telemetry, back-off, ids). */
export interface SchedulesDeps extends Runtime {
  readonly settings: ScheduleSettings;
  /** The `schedules` table. */
  readonly table: () => Promise<TableClient>;
  /** A Service Bus sender for an entity; undefined without Service Bus (scheduled deliveries are then refused). */
  readonly sender: ((entity: string) => ScheduleSender | undefined) | undefined;
  /** What a target may do in this deployment (allow-lists, configured services, the capabilities). */
  readonly effectRules: EffectRules;
  /** What a run's target runs with, on the Durable client of the activity's invocation (a gate release needs one). */
  readonly effects: (client: DurableClient | undefined) => EffectPorts;
}

export interface Schedules {
  /** The schedule use-cases on the Durable client of the invocation being served. */
  service(client: DurableClient): ScheduleService;
  /** The orchestration's activities; a run's target needs the invocation's client (a gate release goes through Durable). */
  activities(client?: DurableClient): ScheduleActivities;
}

export function createSchedules(deps: SchedulesDeps): Schedules {
  const table = new ScheduleTable(deps.table);
  const delivery = deps.sender === undefined ? undefined : senderDelivery(deps.sender);
  return {
    service: (client) => new ScheduleService({ ...deps, table, engine: () => durableScheduleEngine(client), delivery }),
    activities: (client) => new ScheduleActivities({ ...deps, table, effects: deps.effects(client) }),
  };
}
