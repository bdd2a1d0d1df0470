/**
 * The gates capability on Azurite for the integration tests, built through its front door
 * (createGates) on a table of its own, with a Durable client that records the orchestrations started
 * (a stand-in: these tests drive the orchestrations' activities themselves, as a crash or a race would
 * leave them). `instance()` builds another one on the same table — what a second app instance is.
 */
import { randomUUID } from 'node:crypto';

import type { TableClient } from '@azure/data-tables';

import { systemClock } from '../../../shared/clock';
import { loadAppConfig } from '../../../shared/app/settings';
import type { DurableClient, InstanceStatus } from '../../../shared/durable/client';
import type { EffectPorts, JobPort } from '../../../shared/effects/runner';
import { createGates, type GateCommands, type GateReader, type Gates } from '../../../shared/gates';
import type { ActionBatchInput, ActionBatchResult } from '../../../shared/gates/actionRunner';
import type { GateAction } from '../../../shared/gates/actions';
import { GateAuditLog } from '../../../shared/gates/audit';
import type { GateSettings } from '../../../shared/gates/settings';
import { GateStore } from '../../../shared/gates/store';
import { MemoryLogger } from '../../../shared/log';
import { defaultBackoff } from '../../../shared/retry';
import { createStorageClients } from '../../../shared/storage/clients';
import { noTelemetry } from '../../../shared/telemetry/port';

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
export class RecordingDurable implements DurableClient {
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

/** One app instance's gates: its commands (on the world's recording Durable client), its reads and its activities. */
interface GateInstance
  extends
    Pick<GateCommands, 'create' | 'release' | 'reset' | 'scheduledRelease'>,
    Pick<GateReader, 'read' | 'list' | 'describe' | 'runStatus'> {
  readonly gates: Gates;
  /** Started by `holder` (a Caller id; one submitter unless a test names another). */
  startRun(name: string, runId: string | undefined, action: GateAction, holder?: string): ReturnType<GateCommands['startRun']>;
  /** The `gateActions` activity, with `jobs` as the jobs port of the released runs' actions. */
  actions(input: ActionBatchInput, jobs?: JobPort): Promise<ActionBatchResult>;
}

export interface GateWorld {
  readonly table: string;
  readonly store: GateStore;
  readonly audit: GateAuditLog;
  readonly durable: RecordingDurable;
  readonly actionsQueue: string;
  readonly logger: MemoryLogger;
  /** An app instance on the shared table (`checkAction`: the effects' checks of a run's action). */
  instance(
    settings?: Partial<GateSettings>,
    options?: {
      announces?: boolean;
      checkAction?: (action: GateAction) => Promise<void>;
      /** The releasing instance fans the actions out itself, as the app does (off: the test drives the batches). */
      directFanOut?: boolean;
      /** The queue client its actions send through (default: the world's actions queue). */
      queue?: EffectPorts['queue'];
      /** Its table client, given the world's (a test that holds a read in place to order two instances). */
      table?: (client: TableClient) => TableClient;
    },
  ): GateInstance;
  /** The action runner as `service`'s `gateActions` activity runs it. */
  actions(service: GateInstance, input: ActionBatchInput, jobs?: JobPort): Promise<ActionBatchResult>;
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
    telemetry: noTelemetry,
    backoff: { ...defaultBackoff, maxAttempts: 50, maxElapsedMs: 30_000 },
    newId: () => randomUUID(),
  };
  const noJobs: JobPort = {
    submit: () => Promise.reject(new Error('no jobs service here')),
    status: () => Promise.reject(new Error('no jobs service here')),
  };
  const ports = (jobs: JobPort, queue: EffectPorts['queue'] = () => storage.queue(actionsQueue)): EffectPorts => ({
    queue,
    serviceBusSender: () => undefined,
    webhook: { allowed: [], timeoutMs: 1000, maxResponseBytes: 0, maxRedirects: 0, allowPrivateAddresses: false },
    gates: undefined,
    jobs,
  });
  return {
    table,
    store,
    audit,
    durable,
    actionsQueue,
    logger,
    instance(settings = {}, options = {}) {
      // An instance's registrar is its own (its group commits and cached gate row are per instance).
      let jobs = noJobs;
      const gates = createGates({
        ...runtime,
        settings: { ...gateSettings, ...settings },
        table: async () => (options.table ?? ((client: TableClient) => client))(await storage.table(table)),
        eventSender: () => (options.announces === true ? { sendMessages: () => Promise.resolve() } : undefined),
        effects: ports({ submit: (...a) => jobs.submit(...a), status: (...a) => jobs.status(...a) }, options.queue),
        checkAction: options.checkAction ?? (() => Promise.resolve()),
        directFanOut: options.directFanOut ?? false,
      });
      const commands = gates.commands(durable);
      return {
        gates,
        create: (...a) => commands.create(...a),
        release: (...a) => commands.release(...a),
        reset: (...a) => commands.reset(...a),
        startRun: (name, runId, action, holder = 'cred:submitter') => commands.startRun(name, runId, action, holder),
        scheduledRelease: (...a) => commands.scheduledRelease(...a),
        read: (...a) => gates.reader.read(...a),
        list: (...a) => gates.reader.list(...a),
        describe: (...a) => gates.reader.describe(...a),
        runStatus: (...a) => gates.reader.runStatus(...a),
        actions: (input, with_ = noJobs) => {
          jobs = with_;
          return gates.activities.actions(input);
        },
      };
    },
    actions(service, input, jobs = noJobs) {
      return service.actions(input, jobs);
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
