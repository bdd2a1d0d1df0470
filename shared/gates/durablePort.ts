/**
 * What the gates capability needs from a Durable client, as an interface: shared/ does not depend on
 * the Functions runtime, and tests can see every call. functions/gates.ts adapts the durable-functions
 * client to it. Gates use Durable only for work that follows a change (orchestrations they start);
 * the gate's state itself is in the `gates` table.
 */

export interface InstanceStatus {
  /** Running, Pending, Completed, ContinuedAsNew, Failed, Canceled, Terminated or Suspended. */
  readonly runtimeStatus: string;
  readonly customStatus: unknown;
  readonly output: unknown;
}

export interface GateDurableClient {
  /** Starts an orchestration with this id. Throws when an instance with the id is already running. */
  startNew(orchestration: string, instanceId: string, input: unknown): Promise<void>;
  getStatus(instanceId: string): Promise<InstanceStatus | undefined>;
  /** Raises an event; `gone` when the instance no longer exists or has finished. */
  raiseEvent(instanceId: string, event: string, data: unknown): Promise<'delivered' | 'gone'>;
}
