/**
 * The Durable engine: orchestration instances and entities in memory, their work paced by
 * `KeyedWork` (one episode or batch at a time per instance), checkpoints through a `DurableStore`,
 * timers on the host clock. Message plumbing lives here; what an episode or a batch does lives in
 * orchestrations.ts and entities.ts, the client operations in client.ts. Each of those takes the
 * engine through the narrow ports it needs (ports.ts).
 */
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';

import type { HostClock } from '../clock';
import type { HostLogger } from '../log';
import { startActivity } from './activities';
import { runEntityWork } from './entities';
import type { DurableFunctions } from './functions';
import { recoverOrchestration } from './instances';
import { runOrchestrationWork } from './orchestrations';
import type { EngineObserver, Execution, Instances, Mail, Persistence, Scheduling, Timers } from './ports';
import { EventType, iso } from './protocol';
import { consumedAlready, orchestrationSender, storedReceipts } from './receipts';
import { type ExecutionRef, isTerminal, type OutboxItem } from './records';
import { EntityRuntime, type InboxItem, newEntityRecord, OrchestrationRuntime, type QueuedEntityMessage } from './runtime';
import { type DurableStore, InboxKeys } from './store';
import { DurableTimers } from './timers';
import { KeyedWork, Limiter } from './work';

export interface EngineLimits {
  /** Activity functions running at once (host.json maxConcurrentActivityFunctions). */
  readonly activities: number;
  /** Orchestrator functions executing at once (maxConcurrentOrchestratorFunctions). */
  readonly orchestrations: number;
  /** Entity functions executing at once. */
  readonly entities: number;
  /** Operations per entity batch (maxEntityOperationBatchSize). */
  readonly entityBatchSize: number;
}

export function defaultLimits(): EngineLimits {
  const perCore = 10 * Math.max(1, cpus().length);
  return { activities: perCore, orchestrations: perCore, entities: perCore, entityBatchSize: 5000 };
}

export interface EngineOptions {
  readonly store: DurableStore;
  readonly clock: HostClock;
  readonly functions: DurableFunctions;
  readonly log: HostLogger;
  readonly limits?: Partial<EngineLimits>;
  /** host.json entityMessageReorderWindowInMinutes (the extension's default: 30). */
  readonly entityMessageReorderWindowMinutes?: number;
  readonly observer?: EngineObserver;
}

const checkpointAttempts = 5;

export class DurableEngine implements Instances, Mail, Scheduling, Persistence, Execution, Timers {
  readonly orchestrations = new Map<string, OrchestrationRuntime>();
  readonly entities = new Map<string, EntityRuntime>();
  readonly store: DurableStore;
  readonly clock: HostClock;
  readonly functions: DurableFunctions;
  readonly log: HostLogger;
  readonly limits: EngineLimits;
  readonly observer: EngineObserver | undefined;
  /**
   * The extension's MessageSorter is on (reorder window above 0): the receipts of requests it
   * covers are stored with the entity's state (entities.ts).
   */
  readonly sortsEntityMessages: boolean;
  readonly timers: DurableTimers;
  readonly inboxKeys = new InboxKeys();
  readonly activities: Limiter;
  /** Orchestrator and entity function executions at once; checkpoints wait outside these slots. */
  readonly orchestratorSlots: Limiter;
  readonly entitySlots: Limiter;
  private readonly episodes: KeyedWork;
  private readonly batches: KeyedWork;
  private clientWrites = 0;
  private deferred = 0;
  private started = false;
  stopped = false;

  constructor(options: EngineOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.functions = options.functions;
    this.log = options.log;
    this.limits = { ...defaultLimits(), ...options.limits };
    this.observer = options.observer;
    this.sortsEntityMessages = (options.entityMessageReorderWindowMinutes ?? 30) > 0;
    this.timers = new DurableTimers(this.clock);
    this.activities = new Limiter(this.limits.activities);
    const failed = (kind: string) => (key: string, err: unknown) => this.workFailed(kind, key, err);
    this.orchestratorSlots = new Limiter(this.limits.orchestrations);
    this.entitySlots = new Limiter(this.limits.entities);
    // Episodes and batches are not capped themselves: one waiting for its checkpoint holds no slot,
    // so checkpoints of many instances can share a write (group commit).
    this.episodes = new KeyedWork((id) => this.orchestrationWork(id), failed('orchestration'));
    this.batches = new KeyedWork((id) => this.entityWork(id), failed('entity'));
  }

  now(): number {
    return this.clock.now();
  }

  /** Loads the store and resumes whatever was under way when the host last stopped. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const loaded = await this.store.load();
    for (const { record, pending } of loaded.orchestrations) {
      const rt = new OrchestrationRuntime({ ...record, received: storedReceipts(record) });
      this.inboxKeys.observe(record.consumedUpTo);
      for (const p of pending) {
        this.inboxKeys.observe(p.key);
        rt.inbox.push({ event: p.event, pendingKey: p.key });
      }
      this.orchestrations.set(record.instanceId, rt);
    }
    for (const { record, pending } of loaded.entities) {
      const rt = new EntityRuntime({ ...record, received: storedReceipts(record) });
      this.inboxKeys.observe(record.consumedUpTo);
      for (const p of pending) {
        this.inboxKeys.observe(p.key);
        rt.queue.push({ message: p.message, pendingKey: p.key });
      }
      this.entities.set(record.id, rt);
    }
    for (const rt of this.orchestrations.values()) recoverOrchestration(this, rt);
    for (const rt of this.entities.values()) this.recoverEntity(rt);
  }

  /** Stops taking work, lets episodes and batches under way checkpoint, and closes the store. */
  async stop(timeoutMs = 10_000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.timers.cancelAll();
    for (const rt of this.orchestrations.values()) this.endDeferral(rt);
    const deadline = Date.now() + timeoutMs;
    while ((this.episodes.busy > 0 || this.batches.busy > 0 || this.clientWrites > 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await this.store.close();
  }

  /** Nothing running or queued, and no durable timer due but not fired. */
  idle(): boolean {
    return this.episodes.busy + this.batches.busy + this.activities.busy + this.clientWrites + this.deferred + this.timers.dueCount() === 0;
  }

  /** Counts a client write (accepting a message) as work, so `idle()` waits for it. */
  async clientWrite<T>(write: () => Promise<T>): Promise<T> {
    this.clientWrites++;
    try {
      return await write();
    } finally {
      this.clientWrites--;
    }
  }

  // ---- delivery ----------------------------------------------------------------------------

  /** Puts a message in an orchestration's inbox, unless it is stale or a duplicate. */
  deliverToOrchestration(target: { readonly instanceId: string; readonly executionId?: string | undefined }, item: InboxItem): boolean {
    const rt = this.orchestrations.get(target.instanceId);
    const stale =
      rt === undefined ||
      isTerminal(rt.record.status) ||
      (target.executionId !== undefined && target.executionId !== rt.record.executionId) ||
      (item.dedupKey !== undefined && rt.keys.has(item.dedupKey)) ||
      consumedAlready(rt.record.received, rt.inbox, item.origin);
    if (stale) {
      item.ack?.();
      return false;
    }
    if (item.dedupKey !== undefined) rt.keys.add(item.dedupKey);
    item.arrivedAt = performance.now();
    rt.inbox.push(item);
    this.episodes.mark(rt.id);
    return true;
  }

  deliverToEntity(target: string, queued: QueuedEntityMessage): void {
    const rt = this.entity(target);
    if (consumedAlready(rt.record.received, rt.queue, queued.origin)) {
      queued.ack?.();
      return;
    }
    rt.queue.push(queued);
    this.batches.mark(target);
  }

  /** Delivers an outbox item; the receiver's checkpoint (or its refusal) removes it from the outbox. */
  send(sender: OrchestrationRuntime | EntityRuntime, item: OutboxItem): void {
    const ack = (): void => {
      if (sender.removeFromOutbox(item.id)) this.markDirty(sender);
    };
    const origin = { sender: sender instanceof EntityRuntime ? sender.id : orchestrationSender(sender.id), item: item.id };
    if (item.to === 'entity') {
      this.deliverToEntity(item.target, { message: item.message, origin, ack });
      return;
    }
    this.deliverToOrchestration(item.target, {
      event: {
        EventType: EventType.EventRaised,
        EventId: -1,
        Timestamp: iso(this.now()),
        Name: item.name,
        Input: item.input,
      },
      // No completion key: a response sent again by a batch that ran again lands in history, as on
      // Azure Storage (DurableTask.AzureStorage OrchestrationSession.cs:179-188); the SDK ignores it.
      origin,
      executionId: item.target.executionId,
      ack,
    });
  }

  /** Whether `sender` could still send outbox item `item` again after a crash (see receipts.ts). */
  mayResend(sender: string, item: string): boolean {
    const rt = sender.startsWith('@') ? this.entities.get(sender) : this.orchestrations.get(sender.slice(2));
    return rt?.mayResend(item) ?? false;
  }

  markDirty(rt: OrchestrationRuntime | EntityRuntime): void {
    if (rt instanceof OrchestrationRuntime) this.episodes.mark(rt.id);
    else this.batches.mark(rt.id);
  }

  scheduleEpisode(instanceId: string): void {
    this.episodes.mark(instanceId);
  }

  /** Runs the instance's next episode after `ms` (real time) unless something marks it earlier. */
  deferEpisode(rt: OrchestrationRuntime, ms: number): void {
    if (rt.deferral !== undefined) return;
    this.deferred++;
    rt.deferral = setTimeout(() => {
      this.endDeferral(rt);
      this.episodes.mark(rt.id);
    }, ms);
  }

  endDeferral(rt: OrchestrationRuntime): void {
    if (rt.deferral === undefined) return;
    clearTimeout(rt.deferral);
    rt.deferral = undefined;
    this.deferred--;
  }

  entity(id: string): EntityRuntime {
    let rt = this.entities.get(id);
    if (rt === undefined) {
      rt = new EntityRuntime(newEntityRecord(id));
      this.entities.set(id, rt);
    }
    return rt;
  }

  // ---- scheduled work ----------------------------------------------------------------------

  runActivity(target: ExecutionRef, taskId: number, name: string, input: unknown): void {
    startActivity(this, target, taskId, name, input);
  }

  scheduleTimer(instanceId: string, executionId: string, timerId: number, fireAt: number): void {
    this.timers.schedule({ instanceId, timerId, fireAt }, () => {
      this.deliverToOrchestration(
        { instanceId, executionId },
        {
          event: {
            EventType: EventType.TimerFired,
            EventId: -1,
            Timestamp: iso(this.now()),
            TimerId: timerId,
            FireAt: iso(fireAt),
          },
          dedupKey: `t${timerId}`,
          executionId,
        },
      );
    });
  }

  /** Retries a checkpoint a few times (storage hiccups), then gives up with the last error. */
  async checkpoint(what: string, write: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await write();
        return;
      } catch (err) {
        if (attempt >= checkpointAttempts) throw err;
        this.log('warn', `Durable checkpoint of ${what} failed (attempt ${attempt}): ${err instanceof Error ? err.message : String(err)}`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** attempt)));
      }
    }
  }

  private recoverEntity(rt: EntityRuntime): void {
    const holder = rt.record.lockedBy === null ? undefined : this.orchestrations.get(rt.record.lockedBy);
    if (rt.record.lockedBy !== null && (holder === undefined || isTerminal(holder.record.status))) {
      rt.record.lockedBy = null;
      rt.dirty = true;
    }
    for (const item of [...rt.outbox]) this.send(rt, item);
    if (rt.queue.length > 0 || rt.dirty) this.batches.mark(rt.id);
  }

  private async orchestrationWork(id: string): Promise<void> {
    const rt = this.orchestrations.get(id);
    if (rt === undefined || this.stopped) return;
    await runOrchestrationWork(this, rt);
  }

  private async entityWork(id: string): Promise<void> {
    const rt = this.entities.get(id);
    if (rt === undefined || this.stopped) return;
    await runEntityWork(this, rt);
  }

  private workFailed(kind: string, key: string, err: unknown): void {
    this.log(
      'error',
      `Durable ${kind} ${key} could not checkpoint; will retry: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    const retry = setTimeout(() => {
      if (this.stopped) return;
      if (kind === 'orchestration') this.episodes.mark(key);
      else this.batches.mark(key);
    }, 1000);
    retry.unref();
  }
}
