/**
 * A store in process memory, for engine tests and `DEVHOST_DURABLE_STORE=memory`. It copies what it
 * is given (through JSON, as a real store would), so a test can "crash" an engine by dropping it and
 * start a new one on the same store.
 */
import type { EntityRecord, OrchestrationRecord, PendingEntityMessage, PendingOrchestrationEvent } from './records';
import type { DurableStore, EntityCheckpoint, LoadedState, OrchestrationCheckpoint } from './store';

function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export class MemoryStore implements DurableStore {
  readonly kind = 'memory';
  private readonly orchestrations = new Map<string, OrchestrationRecord>();
  private readonly entities = new Map<string, EntityRecord>();
  private readonly orchestrationInbox = new Map<string, PendingOrchestrationEvent[]>();
  private readonly entityInbox = new Map<string, PendingEntityMessage[]>();
  /** Checkpoints written, for tests that count writes. */
  writes = 0;

  load(): Promise<LoadedState> {
    const pendingAfter = <T extends { key: string }>(list: T[] | undefined, upTo: string): T[] =>
      copy((list ?? []).filter((p) => p.key > upTo).sort((a, b) => (a.key < b.key ? -1 : 1)));
    return Promise.resolve({
      orchestrations: [...this.orchestrations.values()].map((record) => ({
        record: copy(record),
        pending: pendingAfter(this.orchestrationInbox.get(record.instanceId), record.consumedUpTo),
      })),
      entities: [...this.entities.values()].map((record) => ({
        record: copy(record),
        pending: pendingAfter(this.entityInbox.get(record.id), record.consumedUpTo),
      })),
    });
  }

  saveOrchestration(checkpoint: OrchestrationCheckpoint): Promise<void> {
    this.writes++;
    this.orchestrations.set(checkpoint.record.instanceId, copy(checkpoint.record));
    this.drop(this.orchestrationInbox, checkpoint.record.instanceId, checkpoint.consumed);
    return Promise.resolve();
  }

  saveEntity(checkpoint: EntityCheckpoint): Promise<void> {
    this.writes++;
    this.entities.set(checkpoint.record.id, copy(checkpoint.record));
    this.drop(this.entityInbox, checkpoint.record.id, checkpoint.consumed);
    return Promise.resolve();
  }

  enqueueOrchestrationEvent(instanceId: string, pending: PendingOrchestrationEvent): Promise<void> {
    this.writes++;
    this.push(this.orchestrationInbox, instanceId, copy(pending));
    return Promise.resolve();
  }

  enqueueEntityMessage(entityId: string, pending: PendingEntityMessage): Promise<void> {
    this.writes++;
    this.push(this.entityInbox, entityId, copy(pending));
    // A client may signal an entity that has never run: give it a record to hang the inbox on.
    if (!this.entities.has(entityId)) {
      this.entities.set(entityId, {
        id: entityId,
        exists: false,
        state: null,
        lastOperationTime: 0,
        lockedBy: null,
        seen: {},
        nextSeq: 0,
        outbox: [],
        consumedUpTo: '',
      });
    }
    return Promise.resolve();
  }

  deleteOrchestration(instanceId: string): Promise<void> {
    this.writes++;
    this.orchestrations.delete(instanceId);
    this.orchestrationInbox.delete(instanceId);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private push<T>(map: Map<string, T[]>, key: string, item: T): void {
    const list = map.get(key) ?? [];
    list.push(item);
    map.set(key, list);
  }

  private drop<T extends { key: string }>(map: Map<string, T[]>, id: string, consumed: readonly string[]): void {
    if (consumed.length === 0) return;
    const gone = new Set(consumed);
    map.set(
      id,
      (map.get(id) ?? []).filter((p) => !gone.has(p.key)),
    );
  }
}
