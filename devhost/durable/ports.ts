/**
 * What the Durable engine's parts may ask of it. The engine (engine.ts) owns the instances, the
 * message plumbing and the pacing of work; episodes (orchestrations.ts), entity batches (entities.ts),
 * activities (activities.ts), instance lifetimes (instances.ts), the client (client.ts) and the
 * debug dump (debug.ts) each take the few of these they use, never the engine itself, so no part
 * depends on the engine and the engine depends on them all.
 */
import type { DurableFunctions } from './functions';
import type { ExecutionRef, OutboxItem } from './records';
import type { Op } from './replay';
import type { EntityRuntime, InboxItem, OrchestrationRuntime, QueuedEntityMessage } from './runtime';
import type { DurableStore } from './store';
import type { PendingTimer } from './timers';
import type { Limiter } from './work';

/** The instances and entities by id, and the engine's clock. */
export interface Instances {
  readonly orchestrations: Map<string, OrchestrationRuntime>;
  readonly entities: ReadonlyMap<string, EntityRuntime>;
  now(): number;
}

/** Puts messages where they go; stale and duplicate ones are dropped (and acknowledged). */
export interface Mail {
  deliverToOrchestration(target: { readonly instanceId: string; readonly executionId?: string | undefined }, item: InboxItem): boolean;
  deliverToEntity(target: string, queued: QueuedEntityMessage): void;
  /** Delivers an outbox item; the receiver's checkpoint (or its refusal) removes it from the sender's outbox. */
  send(sender: OrchestrationRuntime | EntityRuntime, item: OutboxItem): void;
  /** Whether `sender` could still send outbox item `item` again after a crash (receipts.ts). */
  mayResend(sender: string, item: string): boolean;
}

/** Work the engine runs later, paced (one episode at a time per instance, activities within their limit). */
export interface Scheduling {
  scheduleEpisode(instanceId: string): void;
  runActivity(target: ExecutionRef, taskId: number, name: string, input: unknown): void;
  scheduleTimer(instanceId: string, executionId: string, timerId: number, fireAt: number): void;
  /** An instance or entity with new messages or an outbox to write back. */
  markDirty(rt: OrchestrationRuntime | EntityRuntime): void;
}

export interface Persistence {
  readonly store: DurableStore;
  /** Retries a checkpoint a few times (storage hiccups), then gives up with the last error. */
  checkpoint(what: string, write: () => Promise<void>): Promise<void>;
  /** Counts a client write (accepting a message) as work under way, so the engine is not idle during it. */
  clientWrite<T>(write: () => Promise<T>): Promise<T>;
}

/** The app's durable functions, and the slots that bound how many run at once. */
export interface Execution {
  readonly functions: Pick<DurableFunctions, 'check' | 'invoke'>;
  readonly activities: Limiter;
  readonly orchestratorSlots: Limiter;
  readonly entitySlots: Limiter;
  /** True once the engine stops taking work. */
  readonly stopped: boolean;
}

/** Durable timers by instance. */
export interface Timers {
  readonly timers: {
    cancelInstance(instanceId: string): void;
    forInstance(instanceId: string): PendingTimer[];
  };
}

export interface EpisodeObservation {
  readonly instanceId: string;
  readonly executionId: string;
  /** Events in the history the episode replayed. */
  readonly events: number;
  readonly ops: readonly Op[];
  /** Set when replay failed the orchestration (numbering stops mattering then). */
  readonly error: string | undefined;
}

/** Test hooks (the id cross-check); never needed to run. */
export interface EngineObserver {
  episode?(observation: EpisodeObservation): void;
}
