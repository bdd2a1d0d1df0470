/**
 * Gate services on Azurite for the integration tests: a table of their own, the real store, audit
 * log and action runner, and a Durable client that records the orchestrations started (a stand-in:
 * these tests drive the orchestrations' activities themselves, as a crash or a race would leave them).
 * `instance()` builds another service on the same table — what a second app instance is.
 */
import { randomUUID } from 'node:crypto';

import { systemClock } from '../../../shared/clock';
import { loadAppConfig } from '../../../shared/app/settings';
import type { DurableClient, InstanceStatus } from '../../../shared/durable/client';
import type { EffectPorts, JobPort } from '../../../shared/effects/runner';
import { type ActionBatchInput, performActionBatch } from '../../../shared/gates/actionRunner';
import type { GateAction } from '../../../shared/gates/actions';
import { GateAuditLog } from '../../../shared/gates/audit';
import { GateRegistrar } from '../../../shared/gates/registrar';
import { GateService, lateActionsStarter } from '../../../shared/gates/service';
import type { GateSettings } from '../../../shared/gates/settings';
import { GateStore } from '../../../shared/gates/store';
import { GateWatchHub } from '../../../shared/gates/watchHub';
import { MemoryLogger } from '../../../shared/log';
import { defaultBackoff, retryContextOf } from '../../../shared/retry';
import { createStorageClients } from '../../../shared/storage/clients';

export const storage = createStorageClients(loadAppConfig({ AzureWebJobsStorage: process.env.TEST_STORAGE_CONNECTION }).storage);
export const unique = (prefix: string): string => `${prefix}${randomUUID().replace(/-/g, '').slice(0, 12)}`;

const gateSettings: GateSettings = {
  waitMaxSeconds: 120,
  sseMaxSeconds: 60,
  heartbeatSeconds: 15,
  watchIntervalMs: 1000,
  notifyBatchSize: 50,
  maxWaiters: 10_000,
  commandWaitMs: 2000,
};

interface Started {
  readonly orchestration: string;
  readonly instanceId: string;
  readonly input: unknown;
}

/** Records what is started; a second start of a running id is refused, as the Durable API refuses it. */
class RecordingDurable implements DurableClient {
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
  signal(): Promise<void> {
    return Promise.reject(new Error('gates signal no entity'));
  }
  readState<T>(): Promise<T | undefined> {
    return Promise.reject(new Error('gates read no entity'));
  }
  managementLinks(instanceId: string): Record<string, string> {
    return { id: instanceId };
  }
}

export interface GateWorld {
  readonly table: string;
  readonly store: GateStore;
  readonly audit: GateAuditLog;
  readonly durable: RecordingDurable;
  readonly actionsQueue: string;
  readonly logger: MemoryLogger;
  /** An app instance on the shared table (`checkAction`: the effects' checks of a run's action). */
  instance(settings?: Partial<GateSettings>, options?: { announces?: boolean; checkAction?: (action: GateAction) => Promise<void> }): GateService;
  /** The action runner as the `gateActions` activity runs it, on `service`'s release confirmation. */
  actions(service: GateService, input: ActionBatchInput, jobs?: JobPort): ReturnType<typeof performActionBatch>;
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
  const noJobs: JobPort = {
    submit: () => Promise.reject(new Error('no jobs service here')),
    status: () => Promise.reject(new Error('no jobs service here')),
  };
  const ports = (jobs: JobPort): EffectPorts => ({
    queue: () => storage.queue(actionsQueue),
    serviceBusSender: () => undefined,
    webhook: { allowed: [], timeoutMs: 1000, maxResponseBytes: 0, maxRedirects: 0, allowPrivateAddresses: false },
    gates: undefined,
    jobs,
  });
  const retry = (subject: string) => retryContextOf(runtime, subject);
  return {
    table,
    store,
    audit,
    durable,
    actionsQueue,
    logger,
    instance(settings = {}, options = {}) {
      const all = { ...gateSettings, ...settings };
      // An instance's registrar is its own (its group commits and cached gate row are per instance).
      const registrar = new GateRegistrar({
        store,
        clock: systemClock,
        retry: (gate) => retry(`gate ${gate}`),
        maxWaiters: () => all.maxWaiters,
        beforeLateActions: lateActionsStarter(() => durable),
      });
      return new GateService({
        durable: () => durable,
        store,
        registrar,
        hub: new GateWatchHub(() => Promise.resolve(undefined), { intervalMs: 1000, clock: systemClock, logger }),
        settings: all,
        clock: systemClock,
        logger,
        retry,
        newId: () => randomUUID(),
        checkAction: options.checkAction ?? (() => Promise.resolve()),
        announces: () => options.announces ?? false,
        resetsInFlight: new Map(),
      });
    },
    actions(service, input, jobs = noJobs) {
      return performActionBatch(
        { store, confirmRelease: (follow) => service.confirmRelease(follow), effects: ports(jobs), now: () => Date.now(), logger },
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
