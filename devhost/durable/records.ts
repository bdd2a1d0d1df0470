/**
 * What the engine keeps per orchestration instance and per entity, in memory (authoritative) and in
 * the store (for restarts). Cross-instance messages (orchestration → entity, entity → entity,
 * entity → orchestration) are delivered at least once from the sender's outbox (stored with the
 * sender's checkpoint, sent before it, as Azure Storage enqueues before it commits). A receiver
 * drops a copy of an item it has consumed (receipts.ts), never a message sent again by a batch or
 * episode that ran again: a crash doubles what it doubles on Azure and loses nothing.
 */
import type { FailureDetails, HistoryEvent } from './protocol';
import type { Receipts } from './receipts';

export type RuntimeStatus = 'Pending' | 'Running' | 'Completed' | 'Failed' | 'Terminated' | 'Suspended';

const terminalStatuses: ReadonlySet<RuntimeStatus> = new Set(['Completed', 'Failed', 'Terminated']);

export function isTerminal(status: RuntimeStatus): boolean {
  return terminalStatuses.has(status);
}

export interface ParentLink {
  readonly instanceId: string;
  readonly executionId: string;
  readonly taskId: number;
}

/** Identifies an orchestration execution as the target of a message. */
export interface ExecutionRef {
  readonly instanceId: string;
  readonly executionId: string;
}

/** A message to an entity (the extension's RequestMessage and release message, in engine terms). */
export type EntityMessage =
  | {
      readonly kind: 'op';
      readonly id: string;
      readonly operation: string;
      /** JSON text of the operation input, or null. */
      readonly input: string | null;
      readonly signal: boolean;
      /** The instance (orchestration or entity) the request comes from; null from a client. */
      readonly parent: string | null;
      /** Where the response goes (calls only). */
      readonly replyTo?: ExecutionRef;
    }
  | {
      readonly kind: 'lock';
      readonly id: string;
      readonly parent: string;
      readonly owner: ExecutionRef;
      readonly lockSet: readonly string[];
      readonly position: number;
    }
  | { readonly kind: 'release'; readonly id: string; readonly parent: string };

/** An unacknowledged message from an orchestration or entity. */
export type OutboxItem =
  | { readonly id: string; readonly to: 'entity'; readonly target: string; readonly message: EntityMessage }
  | { readonly id: string; readonly to: 'orchestration'; readonly target: ExecutionRef; readonly name: string; readonly input: string };

export interface OrchestrationRecord {
  readonly instanceId: string;
  name: string;
  version: string | null;
  executionId: string;
  status: RuntimeStatus;
  /** JSON text of the input (ExecutionStarted.Input). */
  input: string | null;
  /** JSON text of the output (Completed), or the failure / termination reason. */
  output: string | null;
  customStatus: string | null;
  failureDetails: FailureDetails | null;
  createdTime: number;
  lastUpdatedTime: number;
  parent: ParentLink | null;
  /** The ExecutionStarted event of an execution that has not run its first episode yet. */
  pendingStart: HistoryEvent | null;
  /** History of the current execution. */
  history: HistoryEvent[];
  /** Entity messages sent and not yet consumed by their receiver. */
  outbox: OutboxItem[];
  /** Entity responses consumed, while their entity could still resend them. */
  received: Receipts;
  /** Durable inbox messages up to this key have been consumed. */
  consumedUpTo: string;
}

export interface EntityRecord {
  readonly id: string;
  exists: boolean;
  /** JSON text of the state. */
  state: string | null;
  lastOperationTime: number;
  /** The orchestration instance holding this entity's lock. */
  lockedBy: string | null;
  /** Messages consumed, while their sender could still resend them. */
  received: Receipts;
  outbox: OutboxItem[];
  consumedUpTo: string;
}

/** A client message accepted into a durable inbox (persisted before the client hears 202). */
export interface PendingOrchestrationEvent {
  readonly key: string;
  readonly event: HistoryEvent;
}

export interface PendingEntityMessage {
  readonly key: string;
  readonly message: EntityMessage;
}
