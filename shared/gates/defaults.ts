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
import { occBackoff, retryContextOf } from '../retry';
import { getStorage } from '../storage/clients';
import type { ActionDeps } from './actionRunner';
import type { AnnounceDeps, OpenedDeps } from './activities';
import { GateAuditLog } from './audit';
import type { GateDurableClient } from './durablePort';
import { GateEventPublisher } from './publisher';
import type { GateRouteDeps } from './routes';
import { GateService } from './service';
import { GateStore } from './store';
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
let store: GateStore | undefined;
let publisher: GateEventPublisher | undefined;

function gatesTable() {
  const storage = getStorage(getConfig());
  return () => storage.table(tables.gates);
}

function getStore(): GateStore {
  store ??= new GateStore(gatesTable());
  return store;
}

function getPublisher(): GateEventPublisher {
  publisher ??= new GateEventPublisher(() => getServiceBusSender(getConfig(), serviceBusEntities.topics.gateEvents), getLogger());
  return publisher;
}

export function getGateService(): GateService {
  if (service === undefined) {
    const config = getConfig();
    const logger = getLogger();
    const runtime = { clock: systemClock, random: Math.random, logger, backoff: occBackoff(config.sequences) };
    service = new GateService({
      durable,
      store: getStore(),
      hub: getGateHub(),
      settings: config.gates,
      clock: systemClock,
      logger,
      retry: (subject) => retryContextOf(runtime, subject),
      newId: () => randomUUID(),
      jobs: getJobService,
      announces: () => getPublisher().configured(),
    });
  }
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
  audit ??= new GateAuditLog(gatesTable());
  return audit;
}

export function getGateWaiting(): WaitingDeps {
  return { hub: getGateHub(), settings: getConfig().gates, clock: systemClock, random: Math.random };
}

export function getAnnounceDeps(): AnnounceDeps {
  return { hub: getGateHub(), publisher: getPublisher(), confirmRelease: (input) => getGateService().confirmRelease(input) };
}

export function getOpenedDeps(): OpenedDeps {
  return { audit: getGateAudit(), store: getStore() };
}

export function getActionDeps(): ActionDeps {
  const storage = getStorage(getConfig());
  return {
    store: getStore(),
    confirmRelease: (input) => getGateService().confirmRelease(input),
    actionsQueue: () => storage.queue(queues.gateActions),
    jobs: getJobService,
    now: () => Date.now(),
    logger: getLogger(),
  };
}

export const defaultGateRouteDeps: GateRouteDeps = {
  service: getGateService,
  waiting: getGateWaiting,
  audit: getGateAudit,
};
