/**
 * The durable-functions client behind the Durable ports of shared/ (gates, streams): every operation
 * a capability needs, typed, with the library's "not found" errors turned into values.
 *
 * HTTP functions get the client from a `durableClient` input binding. Its binding data (task hub,
 * management URLs, RPC base URL) is the same for every invocation of the app, so the newest client is
 * kept for work that runs outside an invocation (the gate watchers' reads).
 */
import type { InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';

export interface EntityRef {
  readonly name: string;
  readonly key: string;
}

export interface InstanceStatus {
  readonly runtimeStatus: string;
  readonly customStatus: unknown;
  readonly output: unknown;
}

/** The JS client signals "no such instance" only through the message of the error it throws. */
function isNotFound(err: unknown): boolean {
  return err instanceof Error && (/HTTP 404/.test(err.message) || /^No instance with ID/.test(err.message));
}

export class DurableClientAdapter {
  constructor(readonly client: df.DurableClient) {}

  async signal(entity: EntityRef, operation: string, input: unknown): Promise<void> {
    await this.client.signalEntity(new df.EntityId(entity.name, entity.key), operation, input);
  }

  async readState<T>(entity: EntityRef): Promise<T | undefined> {
    const response = await this.client.readEntityState<T>(new df.EntityId(entity.name, entity.key));
    return response.entityExists ? response.entityState : undefined;
  }

  async startNew(orchestration: string, instanceId: string, input: unknown): Promise<void> {
    await this.client.startNew(orchestration, { instanceId, input });
  }

  async getStatus(instanceId: string): Promise<InstanceStatus | undefined> {
    try {
      const status = await this.client.getStatus(instanceId);
      return { runtimeStatus: String(status.runtimeStatus), customStatus: status.customStatus, output: status.output };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async runtimeStatus(instanceId: string): Promise<string | undefined> {
    return (await this.getStatus(instanceId))?.runtimeStatus;
  }

  /** `gone` when there is no such instance (a finished one accepts and ignores the event). */
  async raiseEvent(instanceId: string, event: string, data: unknown): Promise<'delivered' | 'gone'> {
    try {
      await this.client.raiseEvent(instanceId, event, data);
      return 'delivered';
    } catch (err) {
      if (isNotFound(err)) return 'gone';
      throw err;
    }
  }

  /** As `createCheckStatusResponse` builds them: the management URLs on the origin of the request answered. */
  managementLinks(instanceId: string, requestUrl: URL): Record<string, string> {
    const payload = this.client.createHttpManagementPayload(instanceId) as unknown as Record<string, string>;
    const links: Record<string, string> = {};
    for (const [key, value] of Object.entries(payload)) {
      links[key] = /^https?:\/\//.test(value) ? value.replace(new URL(value).origin, requestUrl.origin) : value;
    }
    return links;
  }
}

let latest: DurableClientAdapter | undefined;

/** The client of this invocation (it must declare `df.input.durableClient()`), kept as the newest. */
export function durableClientOf(context: InvocationContext): DurableClientAdapter {
  latest = new DurableClientAdapter(df.getClient(context));
  return latest;
}

/** The newest client seen by any invocation of this process. */
export function latestDurableClient(): DurableClientAdapter {
  if (latest === undefined) throw new Error('No invocation with a durableClient input has run in this process yet');
  return latest;
}
