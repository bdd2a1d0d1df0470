/**
 * A store in process memory, for engine tests and `DEVHOST_DURABLE_STORE=memory`. Like a real store
 * it keeps serialized copies (history append-only, one JSON text per event), so a test can "crash"
 * an engine by dropping it and start a new one on the same store, and a checkpoint costs what it
 * appends, not the whole history.
 */
import type { HistoryEvent } from './protocol';
import type { EntityRecord, OrchestrationRecord, PendingEntityMessage, PendingOrchestrationEvent } from './records';
import { newEntityRecord } from './runtime';
import type { DurableStore, EntityCheckpoint, LoadedState, OrchestrationCheckpoint } from './store';

interface StoredOrchestration {
  /** The record without its history. */
  readonly summary: string;
  readonly events: string[];
}

function pendingAfter<T extends { key: string }>(list: readonly T[] | undefined, upTo: string): T[] {
  return (list ?? [])
    .filter((p) => p.key > upTo)
    .sort((a, b) => (a.key < b.key ? -1 : 1))
    .map((p) => JSON.parse(JSON.stringify(p)) as T);
}

export class MemoryStore implements DurableStore {
  readonly kind = 'memory';
  private readonly orchestrations = new Map<string, StoredOrchestration>();
  private readonly entities = new Map<string, string>();
  private readonly orchestrationInbox = new Map<string, PendingOrchestrationEvent[]>();
  private readonly entityInbox = new Map<string, PendingEntityMessage[]>();
  /** Writes so far, for tests that count them. */
  writes = 0;

  load(): Promise<LoadedState> {
    const orchestrations = [...this.orchestrations.values()].map((stored) => {
      const record = JSON.parse(stored.summary) as OrchestrationRecord;
      record.history = stored.events.map((e) => JSON.parse(e) as HistoryEvent);
      return { record, pending: pendingAfter(this.orchestrationInbox.get(record.instanceId), record.consumedUpTo) };
    });
    const ids = new Set([...this.entities.keys(), ...this.entityInbox.keys()]);
    const entities = [...ids].map((id) => {
      const text = this.entities.get(id);
      const record = text === undefined ? newEntityRecord(id) : (JSON.parse(text) as EntityRecord);
      return { record, pending: pendingAfter(this.entityInbox.get(id), record.consumedUpTo) };
    });
    return Promise.resolve({ orchestrations, entities });
  }

  saveOrchestration(checkpoint: OrchestrationCheckpoint): Promise<void> {
    const rec = checkpoint.record;
    this.putOrchestration(
      rec.instanceId,
      JSON.stringify({ ...rec, history: [] }),
      checkpoint.appended,
      checkpoint.newExecution,
      checkpoint.consumed,
    );
    return Promise.resolve();
  }

  /** A checkpoint already in JSON (the blob store serializes once for its log and for this copy). */
  putOrchestration(
    instanceId: string,
    summary: string,
    appended: readonly string[],
    newExecution: boolean,
    consumed: readonly string[],
  ): void {
    this.writes++;
    const previous = this.orchestrations.get(instanceId);
    const events = newExecution || previous === undefined ? [] : previous.events;
    events.push(...appended);
    this.orchestrations.set(instanceId, { summary, events });
    this.drop(this.orchestrationInbox, instanceId, consumed);
  }

  saveEntity(checkpoint: EntityCheckpoint): Promise<void> {
    this.writes++;
    this.entities.set(checkpoint.record.id, JSON.stringify(checkpoint.record));
    this.drop(this.entityInbox, checkpoint.record.id, checkpoint.consumed);
    return Promise.resolve();
  }

  enqueueOrchestrationEvent(instanceId: string, pending: PendingOrchestrationEvent): Promise<void> {
    this.writes++;
    this.push(this.orchestrationInbox, instanceId, JSON.parse(JSON.stringify(pending)) as PendingOrchestrationEvent);
    return Promise.resolve();
  }

  enqueueEntityMessage(entityId: string, pending: PendingEntityMessage): Promise<void> {
    this.writes++;
    this.push(this.entityInbox, entityId, JSON.parse(JSON.stringify(pending)) as PendingEntityMessage);
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
