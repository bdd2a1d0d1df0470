/**
 * Gate services on Azurite for the integration tests: a table of their own, the real store, audit
 * log and action runner, and a Durable client that records the orchestrations started (a stand-in:
 * these tests drive the orchestrations' activities themselves, as a crash or a race would leave them).
 * `instance()` builds another service on the same table — what a second app instance is.
 */
import { randomUUID } from 'node:crypto';

import { systemClock } from '../../../shared/clock';
import { loadConfig } from '../../../shared/config';
import type { GateSettings } from '../../../shared/config';
import { type ActionDeps, type ActionBatchInput, performActionBatch } from '../../../shared/gates/actionRunner';
import { GateAuditLog } from '../../../shared/gates/audit';
import type { GateDurableClient, InstanceStatus } from '../../../shared/gates/durablePort';
import { GateService } from '../../../shared/gates/service';
import { GateStore } from '../../../shared/gates/store';
import { GateWatchHub } from '../../../shared/gates/watchHub';
import { MemoryLogger } from '../../../shared/log';
import { defaultBackoff, retryContextOf } from '../../../shared/retry';
import { createStorageClients } from '../../../shared/storage/clients';

export const storage = createStorageClients(loadConfig({ AzureWebJobsStorage: process.env.TEST_STORAGE_CONNECTION }).storage);
export const unique = (prefix: string): string => `${prefix}${randomUUID().replace(/-/g, '').slice(0, 12)}`;

export const gateSettings: GateSettings = {
  waitMaxSeconds: 120,
  sseMaxSeconds: 60,
  heartbeatSeconds: 15,
  watchIntervalMs: 1000,
  notifyBatchSize: 50,
  maxWaiters: 10_000,
  commandWaitMs: 2000,
};

export interface Started {
  readonly orchestration: string;
  readonly instanceId: string;
  readonly input: unknown;
}

/** Records what is started; a second start of a running id is refused, as the Durable API refuses it. */
export class RecordingDurable implements GateDurableClient {
  readonly started: Started[] = [];
  readonly events: { instanceId: string; event: string }[] = [];
  private readonly running = new Set<string>();

  startNew(orchestration: string, instanceId: string, input: unknown): Promise<void> {
    if (this.running.has(instanceId)) return Promise.reject(new Error(`An instance with ID '${instanceId}' already exists.`));
    this.running.add(instanceId);
    this.started.push({ orchestration, instanceId, input });
    return Promise.resolve();
  }
  getStatus(instanceId: string): Promise<InstanceStatus | undefined> {
    return Promise.resolve(this.running.has(instanceId) ? { runtimeStatus: 'Running', customStatus: null, output: null } : undefined);
  }
  raiseEvent(instanceId: string, event: string): Promise<'delivered' | 'gone'> {
    this.events.push({ instanceId, event });
    return Promise.resolve(this.running.has(instanceId) ? 'delivered' : 'gone');
  }
}

export interface GateWorld {
  readonly table: string;
  readonly store: GateStore;
  readonly audit: GateAuditLog;
  readonly durable: RecordingDurable;
  readonly actionsQueue: string;
  readonly logger: MemoryLogger;
  /** An app instance on the shared table (`jobs`: the jobs service's checks of a job action). */
  instance(settings?: Partial<GateSettings>, options?: { announces?: boolean; jobs?: { check(request: unknown): void } }): GateService;
  /** The action runner as the `gateActions` activity runs it, on `service`'s release confirmation. */
  actions(service: GateService, input: ActionBatchInput, jobs?: ActionDeps['jobs']): ReturnType<typeof performActionBatch>;
  /** The messages on the actions queue, parsed (received and deleted). */
  drainActions(): Promise<{ gate: string; generation: number; runId: string; payload: unknown }[]>;
}

export function gateWorld(): GateWorld {
  const table = unique('gates');
  const actionsQueue = unique('gate-actions-');
  const store = new GateStore(() => storage.table(table));
  const audit = new GateAuditLog(() => storage.table(table));
  const durable = new RecordingDurable();
  const logger = new MemoryLogger();
  const runtime = {
    clock: systemClock,
    random: Math.random,
    logger,
    backoff: { ...defaultBackoff, maxAttempts: 50, maxElapsedMs: 30_000 },
  };
  const noJobs: ActionDeps['jobs'] = () => ({ submit: () => Promise.reject(new Error('no jobs service here')) });
  return {
    table,
    store,
    audit,
    durable,
    actionsQueue,
    logger,
    instance(settings = {}, options = {}) {
      return new GateService({
        durable: () => durable,
        store,
        hub: new GateWatchHub(() => Promise.resolve(undefined), { intervalMs: 1000, clock: systemClock, logger }),
        settings: { ...gateSettings, ...settings },
        clock: systemClock,
        logger,
        retry: (subject) => retryContextOf(runtime, subject),
        newId: () => randomUUID(),
        jobs: () => options.jobs ?? { check: () => undefined },
        announces: () => options.announces ?? false,
      });
    },
    actions(service, input, jobs = noJobs) {
      return performActionBatch(
        {
          store,
          confirmRelease: (follow) => service.confirmRelease(follow),
          actionsQueue: () => storage.queue(actionsQueue),
          jobs,
          now: () => Date.now(),
          logger,
        },
        input,
      );
    },
    async drainActions() {
      const queue = await storage.queue(actionsQueue);
      const out: { gate: string; generation: number; runId: string; payload: unknown }[] = [];
      for (;;) {
        const { receivedMessageItems } = await queue.receiveMessages({ numberOfMessages: 32 });
        if (receivedMessageItems.length === 0) return out;
        for (const m of receivedMessageItems) {
          out.push(JSON.parse(Buffer.from(m.messageText, 'base64').toString('utf8')) as (typeof out)[number]);
          await queue.deleteMessage(m.messageId, m.popReceipt);
        }
      }
    },
  };
}
