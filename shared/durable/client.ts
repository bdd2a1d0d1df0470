/**
 * What the capabilities need from a Durable Functions client, as one port: shared/ does not depend
 * on the Functions runtime, and tests can see every call. functions/_durable.ts adapts the
 * durable-functions client of an invocation (its `durableClient` input) to it.
 *
 * Out of process, a client can signal an entity and read its state, start an orchestration, read
 * its status and raise events to it; answers from entities come back through their state.
 */
import type { EntityRef } from './entities';

/**
 * An orchestration's runtime status as the Durable HTTP API spells it. `live`: it may still move
 * (or be moved by an event); `finished`: it never will again. Starting an instance id whose instance
 * is live is refused; a finished one is replaced.
 */
const live = ['Running', 'Pending', 'ContinuedAsNew', 'Suspended'] as const;
const finished = ['Completed', 'Failed', 'Canceled', 'Terminated'] as const;

export interface InstanceStatus {
  /** `Running`, `Completed`, … (the sets above); a string, since it comes from the service. */
  readonly runtimeStatus: string;
  readonly customStatus: unknown;
  readonly output: unknown;
}

export function isLive(status: InstanceStatus | undefined): boolean {
  return status !== undefined && (live as readonly string[]).includes(status.runtimeStatus);
}

export function isFinished(status: InstanceStatus | undefined): boolean {
  return status !== undefined && (finished as readonly string[]).includes(status.runtimeStatus);
}

/** The check-status links `createCheckStatusResponse` gives (`statusQueryGetUri`, `sendEventPostUri`, …). */
export type ManagementLinks = Readonly<Record<string, string>>;

export interface DurableClient {
  /** One-way operation on an entity; resolves once the message is durably queued. */
  signal(entity: EntityRef, operation: string, input: unknown): Promise<void>;
  /** The entity's stored state, or undefined when it does not exist. */
  readState<T>(entity: EntityRef): Promise<T | undefined>;
  /** Starts an orchestration with this id. Throws when an instance with the id is live (see startSingleton). */
  startNew(orchestration: string, instanceId: string, input: unknown): Promise<void>;
  /** The instance's status; undefined when there is no such instance. */
  getStatus(instanceId: string): Promise<InstanceStatus | undefined>;
  /** Raises an event; `gone` when there is no such instance (a finished one accepts and ignores it). */
  raiseEvent(instanceId: string, event: string, data: unknown): Promise<'delivered' | 'gone'>;
  /**
   * The management links of an instance, on the origin of the request being answered. They carry
   * the extension's system key: for admin callers only.
   */
  managementLinks(instanceId: string, requestUrl: URL): ManagementLinks;
}
