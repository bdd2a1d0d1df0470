/** The process-wide job service the functions use, built on first use from the validated config. */
import { randomUUID } from 'node:crypto';

import { systemClock } from '../clock';
import { getConfig } from '../config';
import { getLogger } from '../log';
import { getServiceBusSender } from '../messaging/serviceBus';
import { getSigner } from '../signing/defaults';
import { containers, serviceBusEntities, tables } from '../resources';
import { occBackoff } from '../retry';
import { getStorage } from '../storage/clients';
import type { StreamsApi } from '../streams/service';
import { streamInvoiceLedger } from './billing/ledger';
import { billingProcessor } from './billing/processor';
import { JobEventPublisher } from './events';
import { JobFiles } from './files';
import { JobStore } from './jobStore';
import { registry } from './processor';
import { StorageEnvelopeQueues, workQueueNames } from './queues';
import { ResultStore } from './resultStore';
import { JobService } from './service';

let service: JobService | undefined;
let currentStreams: () => StreamsApi | undefined = () => undefined;

/**
 * How job code reaches the streams capability (it needs a Durable client, which only an invocation
 * with a `durableClient` input has): functions/jobs.ts provides it. A provider that throws means no
 * client is at hand; the delivery then waits for an invocation that has one.
 */
export function useStreamsForJobs(streams: () => StreamsApi | undefined): void {
  currentStreams = streams;
}

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
      queues: new StorageEnvelopeQueues((name) => storage.queue(name), workQueueNames(settings), getSigner),
      processors: registry(
        billingProcessor(settings.billingRates, {
          ledger: streamInvoiceLedger(settings.billingLedgerStream, () => currentStreams(), config.streams.maxBatchEvents),
        }),
      ),
      events: new JobEventPublisher(() => getServiceBusSender(config, serviceBusEntities.topics.jobEvents)),
      clock: systemClock,
      random: Math.random,
      logger: getLogger(),
      newLease: randomUUID,
      backoff: occBackoff(config.sequences),
      signer: getSigner,
    });
  }
  return service;
}
