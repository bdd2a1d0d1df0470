/**
 * What streams needs from a Durable client, as an interface: shared/ does not depend on the
 * Functions runtime. functions/streams.ts adapts the durable-functions client (from a
 * `durableClient` input binding) to it. Out of process, a client can only signal an entity and read
 * its state; the answers it needs come back through the ledger's state.
 */

export type { EntityRef } from '../durableEntities';
import type { EntityRef } from '../durableEntities';

export interface StreamsDurableClient {
  /** One-way operation on an entity; resolves once the message is durably queued. */
  signal(entity: EntityRef, operation: string, input: unknown): Promise<void>;
  /** The entity's state, or undefined when it does not exist. */
  readState<T>(entity: EntityRef): Promise<T | undefined>;
  /** Starts an orchestration with this id. Throws when an instance with the id is already running. */
  startNew(orchestration: string, instanceId: string, input: unknown): Promise<void>;
  /** `Running`, `Pending`, `ContinuedAsNew`, `Completed`, `Failed`, …; undefined when unknown. */
  runtimeStatus(instanceId: string): Promise<string | undefined>;
  /** Raises an event; `gone` when there is no such instance or it has finished. */
  raiseEvent(instanceId: string, event: string, data: unknown): Promise<'delivered' | 'gone'>;
}
