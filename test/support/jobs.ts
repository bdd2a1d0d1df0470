/**
 * The jobs capability on Azurite, built through its front door (createJobs) on freshly named tables,
 * container and queues, with a fake Service Bus sender (the only fake) and a `drain` that delivers
 * queue messages the way the Functions host does: batches, dequeue counts, a failed message made
 * visible again, `-poison` after maxDequeueCount — so the use-cases can be tested without a host.
 */
import { randomUUID } from 'node:crypto';

import type { TableClient } from '@azure/data-tables';
import type { ServiceBusMessage } from '@azure/service-bus';
import type { ContainerClient } from '@azure/storage-blob';
import type { QueueClient } from '@azure/storage-queue';

import { type Clock, systemClock } from '../../shared/clock';
import { readGroup } from '../../shared/config';
import type { DurableClient } from '../../shared/durable/client';
import { billingProcessor } from '../../shared/billing/processor';
import { billingSettings } from '../../shared/billing/settings';
import {
  createJobs,
  cancelQueueName,
  deliveryQueueName,
  type JobEventSender,
  type JobProcessor,
  type Jobs,
  poisonQueueName,
  type PushTransport,
  registry,
  workLaneNames,
  workQueueNames,
} from '../../shared/jobs';
import { type JobSettings, jobSettings } from '../../shared/jobs/settings';
import type { JobRecord } from '../../shared/jobs/ledger/jobRecord';
import { JobStore } from '../../shared/jobs/ledger/jobStore';
import { ResultStore } from '../../shared/jobs/ledger/resultStore';
import { type Logger, MemoryLogger } from '../../shared/log';
import { mapLimited } from '../../shared/mapLimited';
import { defaultBackoff } from '../../shared/retry';
import { Signer } from '../../shared/signing/signer';
import type { StorageClientOptions, StorageClients } from '../../shared/storage/clients';
import { noTelemetry, type Telemetry } from '../../shared/telemetry/port';
import { storageFor, uniqueTableName } from './sequences';
import { runStorage } from './storageAccounts';

/** A Service Bus sender that keeps what it is given (and can be told to fail). */
class FakeEventSender implements JobEventSender {
  readonly sent: ServiceBusMessage[] = [];
  failNext = 0;

  sendMessages(message: ServiceBusMessage): Promise<void> {
    if (this.failNext > 0) {
      this.failNext--;
      return Promise.reject(new Error('Service Bus is unavailable (injected)'));
    }
    this.sent.push(message);
    return Promise.resolve();
  }
}

export interface JobHarnessOptions {
  readonly settings?: Partial<JobSettings>;
  readonly processors?: readonly JobProcessor[];
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Storage for the service (e.g. through a fault proxy); the harness's own reads use a direct connection. */
  readonly connection?: string;
  readonly storage?: StorageClientOptions;
  readonly serviceBus?: boolean;
  /** Share names with another harness (a second instance of the same app). */
  readonly names?: JobNames;
  /** The app's signing key (every harness shares one by default, like instances of one app). */
  readonly signer?: Signer;
  /** How webhook processors' batches are sent (default: refuses every URL). */
  readonly push?: PushTransport;
  readonly telemetry?: Telemetry;
}

/** A push transport that allows no URL: for harnesses that do not push. */
const noPush: PushTransport = {
  urlIssue: () => 'No webhook is allowed in this harness',
  post: () => Promise.reject(new Error('No webhook is allowed in this harness')),
};

/** The key test harnesses sign envelopes and job ids with. */
export const testSigner = new Signer(Buffer.alloc(32, 0x5a));

export interface JobNames {
  readonly jobs: string;
  readonly results: string;
  readonly processors: string;
  readonly container: string;
  readonly queuePrefix: string;
}

interface DrainOptions {
  readonly maxDequeueCount?: number;
  readonly concurrency?: number;
  /** Stop after this many passes over the queues even if messages remain. */
  readonly maxPasses?: number;
}

interface DrainReport {
  readonly delivered: number;
  readonly failures: number;
  readonly poisoned: number;
  readonly errors: string[];
}

/** The Durable client a harness's hand-on trigger is given: no processor of a harness uses one. */
const noDurable = new Proxy({} as DurableClient, {
  get: (_target, name) => () => Promise.reject(new Error(`no Durable client in this harness (${String(name)})`)),
});

export interface JobHarness {
  readonly jobs: Jobs;
  /** The capability's tables as a test reads them (the harness's own stores on them). */
  readonly stores: { readonly jobs: JobStore; readonly results: ResultStore };
  readonly names: JobNames;
  readonly storage: StorageClients;
  readonly events: FakeEventSender;
  readonly logger: Logger;
  readonly queueNames: readonly string[];
  /** The work queues' retry lanes, in the same order. */
  readonly laneNames: readonly string[];
  queue(name: string): Promise<QueueClient>;
  table(which: 'jobs' | 'results'): Promise<TableClient>;
  container(): Promise<ContainerClient>;
  rows(which: 'jobs' | 'results'): Promise<Record<string, unknown>[]>;
  blobs(): Promise<string[]>;
  /** Message texts (decoded) waiting in every work and poison queue, by queue. */
  messages(): Promise<Map<string, string[]>>;
  drain(options?: DrainOptions): Promise<DrainReport>;
  /** Runs the `jobsCancelItems` trigger on the cancel requests waiting now (the background step of a cancel); how many ran. */
  runCancels(): Promise<number>;
  /** DELETE /api/jobs/{id} and then its background step, as the host would run it: the job as it then is. */
  cancel(id: string): Promise<JobRecord>;
}

export function jobNames(): JobNames {
  const id = randomUUID().replace(/-/g, '').slice(0, 12);
  return {
    jobs: uniqueTableName('jobs'),
    results: uniqueTableName('jres'),
    processors: uniqueTableName('jprc'),
    container: `jobs-${id}`,
    queuePrefix: `jq-${id}`,
  };
}

const decode = (text: string): string => Buffer.from(text, 'base64').toString('utf8');

export function jobHarness(options: JobHarnessOptions = {}): JobHarness {
  const direct = storageFor(runStorage());
  const storage =
    options.connection === undefined && options.storage === undefined
      ? direct
      : storageFor(options.connection ?? runStorage(), options.storage ?? {});
  const names = options.names ?? jobNames();
  const settings: JobSettings = {
    ...readGroup(jobSettings, {}),
    retryDelaySeconds: 0,
    queues: 2,
    ...options.settings,
    queuePrefix: names.queuePrefix,
  };
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? new MemoryLogger();
  const signer = () => Promise.resolve(options.signer ?? testSigner);
  const events = new FakeEventSender();
  const queueNames = workQueueNames(settings);
  const laneNames = workLaneNames(settings);
  const jobs = createJobs({
    settings,
    storage: {
      jobs: () => storage.table(names.jobs),
      results: () => storage.table(names.results),
      processors: () => storage.table(names.processors),
      container: () => storage.container(names.container),
      containerName: names.container,
      queue: (name) => storage.queue(name),
    },
    eventSender: () => (options.serviceBus === false ? undefined : events),
    signer,
    processors: registry(billingProcessor(readGroup(billingSettings, {}).rates), ...(options.processors ?? [])),
    push: options.push ?? noPush,
    clock,
    random: Math.random,
    logger,
    telemetry: options.telemetry ?? noTelemetry,
    backoff: { ...defaultBackoff, maxAttempts: 30, maxElapsedMs: 20_000 },
    newId: randomUUID,
  });
  const queue = (name: string) => direct.queue(name);
  const table = (which: 'jobs' | 'results') => direct.table(which === 'jobs' ? names.jobs : names.results);
  const container = () => direct.container(names.container);
  const allQueues = [...queueNames, ...queueNames.map(poisonQueueName), ...laneNames, ...laneNames.map(poisonQueueName)];
  const deliveries = deliveryQueueName(settings);
  const runCancels = async (): Promise<number> => {
    const requests = await queue(cancelQueueName(settings));
    let ran = 0;
    for (;;) {
      const batch = (await requests.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 60 })).receivedMessageItems;
      if (batch.length === 0) return ran;
      for (const m of batch) {
        await jobs.cancels.onRequest(decode(m.messageText));
        await requests.deleteMessage(m.messageId, m.popReceipt);
        ran++;
      }
    }
  };

  return {
    jobs,
    stores: {
      jobs: new JobStore(() => direct.table(names.jobs)),
      results: new ResultStore(
        () => direct.table(names.results),
        () => clock.now(),
      ),
    },
    names,
    storage: direct,
    events,
    logger,
    queueNames,
    laneNames,
    queue,
    table,
    container,
    async rows(which) {
      const out: Record<string, unknown>[] = [];
      for await (const row of (await table(which)).listEntities<Record<string, unknown>>()) out.push(row);
      return out;
    },
    async blobs() {
      const out: string[] = [];
      for await (const blob of (await container()).listBlobsFlat()) out.push(blob.name);
      return out;
    },
    async messages() {
      const out = new Map<string, string[]>();
      for (const name of allQueues) {
        const peeked = await (await queue(name)).peekMessages({ numberOfMessages: 32 });
        out.set(
          name,
          peeked.peekedMessageItems.map((m) => decode(m.messageText)),
        );
      }
      return out;
    },
    runCancels,
    async cancel(id) {
      await jobs.cancels.request(id);
      await runCancels();
      return jobs.reads.job(id);
    },
    async drain(drainOptions = {}) {
      const maxDequeueCount = drainOptions.maxDequeueCount ?? 5;
      let delivered = 0;
      let failures = 0;
      let poisoned = 0;
      const errors: string[] = [];
      for (let pass = 0; pass < (drainOptions.maxPasses ?? 10_000); pass++) {
        let received = 0;
        // Each work queue and each retry lane, as the host's triggers read them.
        for (const name of [...queueNames, ...laneNames]) {
          const work = await queue(name);
          const batch = (await work.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 60 })).receivedMessageItems;
          received += batch.length;
          await mapLimited(batch, drainOptions.concurrency ?? 8, async (m) => {
            delivered++;
            try {
              // As the host's triggers: a work queue's failed message moves to its lane, a lane's is delivered again.
              const lane = laneNames[queueNames.indexOf(name)];
              await jobs.work.onMessage(decode(m.messageText), { dequeueCount: m.dequeueCount, ...(lane === undefined ? {} : { lane }) });
              await work.deleteMessage(m.messageId, m.popReceipt);
            } catch (err) {
              failures++;
              errors.push(err instanceof Error ? err.message : String(err));
              if (m.dequeueCount >= maxDequeueCount) {
                await (await queue(poisonQueueName(name))).sendMessage(m.messageText);
                await work.deleteMessage(m.messageId, m.popReceipt);
              } else {
                await work.updateMessage(m.messageId, m.popReceipt, undefined, 0);
              }
            }
          });
          const poison = await queue(poisonQueueName(name));
          const dead = (await poison.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 60 })).receivedMessageItems;
          received += dead.length;
          for (const m of dead) {
            poisoned++;
            await jobs.work.onPoison(decode(m.messageText), poison.name);
            await poison.deleteMessage(m.messageId, m.popReceipt);
          }
        }
        // The hand-on trigger: a completed job's processor step, on its own (here: no) Durable client.
        const handOn = await queue(deliveries);
        for (const m of (await handOn.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 60 })).receivedMessageItems) {
          received++;
          await jobs.outputs.onDeliveryRequest(decode(m.messageText), noDurable);
          await handOn.deleteMessage(m.messageId, m.popReceipt);
        }
        received += await runCancels();
        if (received === 0) break;
      }
      return { delivered, failures, poisoned, errors };
    },
  };
}
