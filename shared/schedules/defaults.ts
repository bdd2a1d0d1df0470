/**
 * The process-wide wiring of the schedules capability: the index table, the activities and the
 * service, built on first use from the validated config and the shared storage and Service Bus
 * clients. The HTTP functions bind a service to their invocation's Durable client.
 */
import { randomUUID } from 'node:crypto';

import { systemClock } from '../clock';
import { type Config, getConfig } from '../config';
import { getGateService } from '../gates/defaults';
import { getJobService } from '../jobs/defaults';
import { isFinished } from '../jobs/jobRecord';
import { getLogger } from '../log';
import { getServiceBusSender } from '../messaging/serviceBus';
import { tables } from '../resources';
import { occBackoff } from '../retry';
import { getStorage } from '../storage/clients';
import { ScheduleActivities } from './activities';
import type { ScheduleEngine } from './engine';
import { senderDelivery } from './scheduledDelivery';
import { ScheduleTable } from './scheduleTable';
import { ScheduleService } from './service';
import type { GateReleasePort, JobPort, TargetDeps } from './targets';
import { parseAllowList } from './webhook/allowList';

/** The gates capability's release use-case (it needs the Durable client functions/gates.ts binds). */
const gates: GateReleasePort = {
  async release(gate, by, note) {
    return (await getGateService().release(gate, { by, note })).outcome;
  },
};

/**
 * The jobs capability's submit and status use-cases. The run id is the submission's idempotency key,
 * so a retried run finds the job it submitted instead of submitting another.
 */
const jobs: JobPort = {
  async submit(processor, items, key) {
    const { job } = await getJobService().submit({ processor, items }, key);
    return job.id;
  },
  async status(handle) {
    const job = await getJobService().job(handle);
    if (!isFinished(job.phase)) return { state: 'running' };
    const counts = `${job.succeeded ?? 0} succeeded, ${job.failed ?? 0} failed`;
    return job.phase === 'completed'
      ? { state: 'succeeded', detail: `job ${job.id} completed (${counts})` }
      : { state: 'failed', reason: `job ${job.id} completed with failures (${counts})` };
  },
};

let table: ScheduleTable | undefined;

export function getScheduleTable(): ScheduleTable {
  if (table === undefined) {
    const storage = getStorage(getConfig());
    table = new ScheduleTable(() => storage.table(tables.schedules));
  }
  return table;
}

export function targetDeps(config: Config): TargetDeps {
  const storage = getStorage(config);
  const s = config.schedules;
  return {
    queue: (name) => storage.queue(name),
    serviceBusSender: (entity) => getServiceBusSender(config, entity),
    webhook: {
      allowed: parseAllowList(s.webhookAllowedHosts),
      timeoutMs: s.webhookTimeoutMs,
      maxResponseBytes: s.webhookMaxResponseBytes,
      maxRedirects: s.webhookMaxRedirects,
      allowPrivateAddresses: s.webhookAllowPrivateAddresses,
    },
    gates,
    jobs,
  };
}

let activities: ScheduleActivities | undefined;

export function getScheduleActivities(): ScheduleActivities {
  if (activities === undefined) {
    const config = getConfig();
    activities = new ScheduleActivities({
      table: getScheduleTable(),
      targets: targetDeps(config),
      settings: config.schedules,
      clock: systemClock,
      random: Math.random,
      logger: getLogger(),
      backoff: occBackoff(config.sequences),
    });
  }
  return activities;
}

/** A service bound to one invocation's Durable client (cheap: everything it holds is shared). */
export function scheduleService(engine: ScheduleEngine): ScheduleService {
  const config = getConfig();
  return new ScheduleService({
    table: getScheduleTable(),
    engine: () => engine,
    delivery: config.serviceBus === undefined ? undefined : senderDelivery((entity) => getServiceBusSender(config, entity)),
    settings: config.schedules,
    gatesAvailable: true,
    jobsAvailable: true,
    jobsQueuePrefix: config.jobs.queuePrefix,
    clock: systemClock,
    random: Math.random,
    logger: getLogger(),
    backoff: occBackoff(config.sequences),
    newId: randomUUID,
  });
}
