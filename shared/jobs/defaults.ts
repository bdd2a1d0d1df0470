/** The process-wide job service the functions use, built on first use from the validated config. */
import { randomUUID } from 'node:crypto';

import { systemClock } from '../clock';
import { getConfig } from '../config';
import { getLogger } from '../log';
import { getServiceBusSender } from '../messaging/serviceBus';
import { containers, serviceBusEntities, tables } from '../resources';
import { defaultBackoff } from '../retry';
import { getStorage } from '../storage/clients';
import { billingProcessor } from './billing/processor';
import { JobEventPublisher } from './events';
import { JobFiles } from './files';
import { JobStore } from './jobStore';
import { registry } from './processor';
import { StorageEnvelopeQueues, workQueueNames } from './queues';
import { ResultStore } from './resultStore';
import { JobService } from './service';

let service: JobService | undefined;

export function getJobService(): JobService {
  if (service === undefined) {
    const config = getConfig();
    const storage = getStorage(config);
    const settings = config.jobs;
    service = new JobService({
      settings,
      jobs: new JobStore(() => storage.table(tables.jobs)),
      results: new ResultStore(
        () => storage.table(tables.jobResults),
        () => systemClock.now(),
      ),
      files: new JobFiles(() => storage.container(containers.jobs), containers.jobs),
      queues: new StorageEnvelopeQueues((name) => storage.queue(name), workQueueNames(settings)),
      processors: registry(billingProcessor(settings.billingRates)),
      events: new JobEventPublisher(() => getServiceBusSender(config, serviceBusEntities.topics.jobEvents)),
      clock: systemClock,
      random: Math.random,
      logger: getLogger(),
      newLease: randomUUID,
      backoff: { ...defaultBackoff, maxAttempts: config.sequences.maxAttempts, maxElapsedMs: config.sequences.maxWaitMs },
    });
  }
  return service;
}
