/**
 * In-memory state of one orchestration instance or entity: the record as last checkpointed, the
 * messages waiting for the next episode or batch, and what the last checkpoint stored (so receivers
 * know which messages a sender could still resend after a crash).
 */
import { EventType, type HistoryEvent } from './protocol';
import type { ReplayResult } from './replay';
import type { Origin } from './receipts';
import type { EntityMessage, EntityRecord, OrchestrationRecord, OutboxItem } from './records';

export interface InboxItem {
  readonly event: HistoryEvent;
  /** Durable inbox key (client messages, persisted before they were acknowledged). */
  readonly pendingKey?: string;
  /** Completion identity (`t<id>`); a second copy is dropped. */
  readonly dedupKey?: string;
  /** The outbox item this is (entity responses and lock grants); a copy already consumed is dropped. */
  readonly origin?: Origin;
  /** Execution the message belongs to; messages for an earlier execution are dropped. */
  readonly executionId?: string;
  /** Tells the sender its outbox item arrived, once this event is checkpointed (or dropped). */
  readonly ack?: () => void;
  /** performance.now() when it arrived (pacing, see `episodeDelay`). */
  arrivedAt?: number;
}

export interface QueuedEntityMessage {
  readonly message: EntityMessage;
  readonly pendingKey?: string;
  /** The outbox item this is (messages from orchestrations and entities). */
  readonly origin?: Origin;
  readonly ack?: () => void;
}

/** The key an event completes, if it completes a scheduled task or an entity request. */
function completionKey(event: HistoryEvent): string | undefined {
  if (
    event.EventType === EventType.TaskCompleted ||
    event.EventType === EventType.TaskFailed ||
    event.EventType === EventType.SubOrchestrationInstanceCompleted ||
    event.EventType === EventType.SubOrchestrationInstanceFailed
  ) {
    return `t${event.TaskScheduledId}`;
  }
  return event.EventType === EventType.TimerFired ? `t${event.TimerId}` : undefined;
}

/** An event's JSON with `IsPlayed` added (stored events never carry it). */
export function playedJson(json: string, played: boolean): string {
  return `${json.slice(0, -1)},"IsPlayed":${played}}`;
}

abstract class Sender {
  /** Ids of the outbox items the last stored outbox has, or a checkpoint under way may store. */
  private storedSends = new Set<string>();
  /** The outbox changed since the last checkpoint (acks): write it back when idle. */
  dirty = false;
  private changes = 0;

  abstract get outbox(): OutboxItem[];

  /** A copy of the outbox to store, and a mark to tell later whether it changed meanwhile. */
  snapshotOutbox(): { readonly items: OutboxItem[]; readonly changes: number } {
    // Until this write lands (or fails), its items may be what a restart finds.
    for (const item of this.outbox) this.storedSends.add(item.id);
    return { items: [...this.outbox], changes: this.changes };
  }

  markStored(items: readonly OutboxItem[], changesAtSnapshot: number): void {
    this.storedSends = new Set(items.map((item) => item.id));
    this.dirty = this.changes !== changesAtSnapshot;
  }

  /** Whether a restart could find this item in the stored outbox (and send it again). */
  mayResend(itemId: string): boolean {
    return this.storedSends.has(itemId) || this.outbox.some((item) => item.id === itemId);
  }

  removeFromOutbox(id: string): boolean {
    const at = this.outbox.findIndex((item) => item.id === id);
    if (at < 0) return false;
    this.outbox.splice(at, 1);
    this.changes++;
    this.dirty = true;
    return true;
  }
}

export class OrchestrationRuntime extends Sender {
  inbox: InboxItem[] = [];
  /** Completion keys already in history or inbox for the current execution. */
  keys = new Set<string>();
  /** Each stored history event as JSON with IsPlayed: true, ready to splice into the next payload. */
  played: string[] = [];
  lastReplay: ReplayResult | undefined;
  readonly completionWaiters = new Set<() => void>();
  /** Activities of this instance queued or running. */
  activeActivities = 0;
  /** How long the last episode took (ms), which sets how long results may gather. */
  lastEpisodeMs = 0;
  deferral: NodeJS.Timeout | undefined;

  constructor(public record: OrchestrationRecord) {
    super();
    this.resetHistoryCaches();
    this.markStored(this.outbox, 0);
  }

  get outbox(): OutboxItem[] {
    return this.record.outbox;
  }

  get id(): string {
    return this.record.instanceId;
  }

  resetHistoryCaches(): void {
    this.keys = new Set();
    this.played = [];
    this.appendPlayed(this.record.history);
  }

  /** Adds stored events to the payload cache and the completion keys (`json`: their JSON, if at hand). */
  appendPlayed(events: readonly HistoryEvent[], json?: readonly string[]): void {
    for (let i = 0; i < events.length; i++) {
      const event = events[i] as HistoryEvent;
      this.played.push(playedJson(json?.[i] ?? JSON.stringify(event), true));
      const key = completionKey(event);
      if (key !== undefined) this.keys.add(key);
    }
  }
}

export class EntityRuntime extends Sender {
  queue: QueuedEntityMessage[] = [];

  constructor(public record: EntityRecord) {
    super();
    this.markStored(this.outbox, 0);
  }

  get outbox(): OutboxItem[] {
    return this.record.outbox;
  }

  get id(): string {
    return this.record.id;
  }
}

export function newEntityRecord(id: string): EntityRecord {
  return { id, exists: false, state: null, lastOperationTime: 0, lockedBy: null, received: {}, outbox: [], consumedUpTo: '' };
}
