/**
 * A store in process memory, for engine tests and `DEVHOST_DURABLE_STORE=memory`. Like a real store
 * it keeps serialized copies (history append-only, one JSON text per event), so a test can "crash"
 * an engine by dropping it and start a new one on the same store, and a checkpoint costs what it
 * appends, not the whole history. The blob store keeps its materialized copy in one of these and
 * feeds it the texts it already wrote (`put…`), so nothing is serialized twice.
 */
import type { HistoryEvent } from './protocol';
import type { EntityMessage, EntityRecord, OrchestrationRecord, PendingEntityMessage, PendingOrchestrationEvent } from './records';
import { newEntityRecord } from './runtime';
import type { DurableStore, EntityCheckpoint, LoadedState, OrchestrationCheckpoint } from './store';

interface StoredOrchestration {
  /** The record without its history. */
  readonly summary: string;
  readonly events: string[];
}

/** An accepted inbox message: its key and JSON text. */
interface Pending {
  readonly key: string;
  readonly json: string;
}

function pendingAfter(list: readonly Pending[] | undefined, upTo: string): Pending[] {
  return (list ?? []).filter((p) => p.key > upTo).sort((a, b) => (a.key < b.key ? -1 : 1));
}

export class MemoryStore implements DurableStore {
  readonly kind = 'memory';
  private readonly orchestrations = new Map<string, StoredOrchestration>();
  private readonly entities = new Map<string, string>();
  private readonly orchestrationInbox = new Map<string, Pending[]>();
  private readonly entityInbox = new Map<string, Pending[]>();
  /** Writes so far, for tests that count them. */
  writes = 0;

  load(): Promise<LoadedState> {
    const orchestrations = [...this.orchestrations.values()].map((stored) => {
      const record = JSON.parse(stored.summary) as OrchestrationRecord;
      record.history = stored.events.map((e) => JSON.parse(e) as HistoryEvent);
      const pending = pendingAfter(this.orchestrationInbox.get(record.instanceId), record.consumedUpTo);
      return { record, pending: pending.map((p) => ({ key: p.key, event: JSON.parse(p.json) as HistoryEvent })) };
    });
    const ids = new Set([...this.entities.keys(), ...this.entityInbox.keys()]);
    const entities = [...ids].map((id) => {
      const text = this.entities.get(id);
      const record = text === undefined ? newEntityRecord(id) : (JSON.parse(text) as EntityRecord);
      const pending = pendingAfter(this.entityInbox.get(id), record.consumedUpTo);
      return { record, pending: pending.map((p) => ({ key: p.key, message: JSON.parse(p.json) as EntityMessage })) };
    });
    return Promise.resolve({ orchestrations, entities });
  }

  saveOrchestration(c: OrchestrationCheckpoint): Promise<void> {
    this.putOrchestration(c.record.instanceId, JSON.stringify({ ...c.record, history: [] }), c.appended, c.newExecution, c.consumed);
    return Promise.resolve();
  }

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

  saveEntity(c: EntityCheckpoint): Promise<void> {
    this.putEntity(c.record.id, JSON.stringify(c.record), c.consumed);
    return Promise.resolve();
  }

  putEntity(id: string, json: string, consumed: readonly string[]): void {
    this.writes++;
    this.entities.set(id, json);
    this.drop(this.entityInbox, id, consumed);
  }

  enqueueOrchestrationEvent(instanceId: string, pending: PendingOrchestrationEvent): Promise<void> {
    this.putPending('o', instanceId, pending.key, JSON.stringify(pending.event));
    return Promise.resolve();
  }

  enqueueEntityMessage(entityId: string, pending: PendingEntityMessage): Promise<void> {
    this.putPending('e', entityId, pending.key, JSON.stringify(pending.message));
    return Promise.resolve();
  }

  putPending(kind: 'o' | 'e', id: string, key: string, json: string): void {
    this.writes++;
    const map = kind === 'o' ? this.orchestrationInbox : this.entityInbox;
    const list = map.get(id) ?? [];
    list.push({ key, json });
    map.set(id, list);
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

  private drop(map: Map<string, Pending[]>, id: string, consumed: readonly string[]): void {
    if (consumed.length === 0) return;
    const gone = new Set(consumed);
    map.set(
      id,
      (map.get(id) ?? []).filter((p) => !gone.has(p.key)),
    );
  }
}
