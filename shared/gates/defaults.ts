/**
 * The process-wide gate services the functions use, built on first use from the validated config and
 * the shared storage clients. The Durable client comes from functions/ (it needs a `durableClient`
 * input binding, which shared/ cannot declare): `bindGateDurableClient` is given a getter for it.
 */
import { randomUUID } from 'node:crypto';

import { systemClock } from '../clock';
import { getConfig } from '../config';
import { AppError } from '../errors';
import { getJobService } from '../jobs/defaults';
import { onShutdown } from '../lifecycle';
import { getLogger } from '../log';
import { getServiceBusSender } from '../messaging/serviceBus';
import { queues, serviceBusEntities, tables } from '../resources';
import { getStorage } from '../storage/clients';
import type { ActionDeps, AnnounceDeps } from './activities';
import { GateAuditLog } from './audit';
import type { GateDurableClient } from './durablePort';
import { GateEventPublisher } from './publisher';
import type { GateRouteDeps } from './routes';
import { GateService } from './service';
import type { WaitingDeps } from './waiting';
import { GateWatchHub } from './watchHub';

let durableClient: (() => GateDurableClient) | undefined;

export function bindGateDurableClient(getter: () => GateDurableClient): void {
  durableClient = getter;
}

function durable(): GateDurableClient {
  if (durableClient === undefined) throw new AppError('Internal', 'No Durable client is bound for the gates (functions/gates.ts binds it)');
  return durableClient();
}

let service: GateService | undefined;
let hub: GateWatchHub | undefined;
let audit: GateAuditLog | undefined;
let publisher: GateEventPublisher | undefined;

export function getGateService(): GateService {
  service ??= new GateService({
    durable,
    hub: getGateHub(),
    settings: getConfig().gates,
    clock: systemClock,
    logger: getLogger(),
    newId: () => randomUUID(),
    jobs: getJobService,
  });
  return service;
}

export function getGateHub(): GateWatchHub {
  if (hub === undefined) {
    const created = new GateWatchHub((name) => getGateService().read(name), {
      intervalMs: getConfig().gates.watchIntervalMs,
      clock: systemClock,
      logger: getLogger(),
    });
    // Open long polls answer and event streams end, so clients reconnect to an instance that stays.
    onShutdown(() => Promise.resolve(created.close()));
    hub = created;
  }
  return hub;
}

export function getGateAudit(): GateAuditLog {
  if (audit === undefined) {
    const storage = getStorage(getConfig());
    audit = new GateAuditLog(() => storage.table(tables.gateAudit));
  }
  return audit;
}

export function getGateWaiting(): WaitingDeps {
  return { hub: getGateHub(), settings: getConfig().gates, clock: systemClock, random: Math.random };
}

export function getAnnounceDeps(): AnnounceDeps {
  publisher ??= new GateEventPublisher(() => getServiceBusSender(getConfig(), serviceBusEntities.topics.gateEvents), getLogger());
  return { audit: getGateAudit(), hub: getGateHub(), publisher, now: () => Date.now() };
}

export function getActionDeps(): ActionDeps {
  const storage = getStorage(getConfig());
  return { actionsQueue: () => storage.queue(queues.gateActions), jobs: getJobService };
}

export const defaultGateRouteDeps: GateRouteDeps = {
  service: getGateService,
  waiting: getGateWaiting,
  audit: getGateAudit,
};
