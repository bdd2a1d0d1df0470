/**
 * Where the engine checkpoints. The engine is authoritative in memory; the store only has to make
 * each checkpoint durable (one write per episode, two per entity batch) and give everything back on start.
 */
import type { EntityRecord, OrchestrationRecord, PendingEntityMessage, PendingOrchestrationEvent } from './records';

interface LoadedOrchestration {
  readonly record: OrchestrationRecord;
  /** Accepted client messages not consumed yet (key > record.consumedUpTo), in key order. */
  readonly pending: readonly PendingOrchestrationEvent[];
}

interface LoadedEntity {
  readonly record: EntityRecord;
  readonly pending: readonly PendingEntityMessage[];
}

export interface LoadedState {
  readonly orchestrations: readonly LoadedOrchestration[];
  readonly entities: readonly LoadedEntity[];
}

export interface OrchestrationCheckpoint {
  /** The record after the episode (stores ignore its `history`: they keep their own). */
  readonly record: OrchestrationRecord;
  /** JSON text of each history event this episode appended to the current execution. */
  readonly appended: readonly string[];
  /** A new execution began (start, continueAsNew): the stored history restarts empty. */
  readonly newExecution: boolean;
  /** Inbox keys consumed by this checkpoint, so the store can delete them. */
  readonly consumed: readonly string[];
}

export interface EntityCheckpoint {
  readonly record: EntityRecord;
  readonly consumed: readonly string[];
  /**
   * Which write of a batch this is (entities.ts): its new `state` (inputs not consumed yet), the
   * `consumption` of its inputs, or a `summary` writing back the outbox. Stores treat all alike.
   */
  readonly step: 'state' | 'consumption' | 'summary';
}

export interface DurableStore {
  readonly kind: 'memory' | 'blob';
  load(): Promise<LoadedState>;
  saveOrchestration(checkpoint: OrchestrationCheckpoint): Promise<void>;
  saveEntity(checkpoint: EntityCheckpoint): Promise<void>;
  /** Makes a client message durable before it is acknowledged. */
  enqueueOrchestrationEvent(instanceId: string, pending: PendingOrchestrationEvent): Promise<void>;
  enqueueEntityMessage(entityId: string, pending: PendingEntityMessage): Promise<void>;
  deleteOrchestration(instanceId: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Keys for durable inbox messages: increasing within and across runs of this process (so "consumed
 * up to" is one comparison), fixed width so they sort as strings.
 */
export class InboxKeys {
  private last = 0;

  observe(key: string): void {
    const n = Number(key);
    if (Number.isFinite(n) && n > this.last) this.last = n;
  }

  next(): string {
    this.last = Math.max(this.last + 1, Date.now() * 1000);
    return String(this.last).padStart(17, '0');
  }
}
