/**
 * What the engine keeps per orchestration instance and per entity, in memory (authoritative) and in
 * the store (for restarts). Cross-instance messages (orchestration → entity, entity → entity,
 * entity → orchestration) are delivered at least once from the sender's persisted outbox and
 * de-duplicated by the receiver, so a crash between the sender's checkpoint and the receiver's
 * never loses or doubles a message.
 */
import type { FailureDetails, HistoryEvent } from './protocol';

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

/** De-duplication stamp: the sender's key and its per-sender sequence number. */
interface SenderStamp {
  readonly sender: string;
  readonly seq: number;
}

export type StampedEntityMessage = EntityMessage & { readonly stamp?: SenderStamp };

/** An unacknowledged message from an orchestration or entity. */
export type OutboxItem =
  | { readonly id: string; readonly to: 'entity'; readonly target: string; readonly message: StampedEntityMessage }
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
  /** Entity messages sent and not yet processed; each carries the sending event id as its sequence. */
  outbox: OutboxItem[];
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
  /** Highest sequence number processed per sender, while the sender may still resend. */
  seen: Record<string, number>;
  nextSeq: number;
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

export function senderKey(ref: ExecutionRef): string {
  return `${ref.instanceId}|${ref.executionId}`;
}
