/**
 * The durable-functions client behind shared/'s Durable port (shared/durable/client.ts): every
 * operation a capability needs, typed, with the library's "not found" errors turned into values.
 * Functions get the client from a `durableClient` input binding, one per invocation.
 */
import type { InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';

import { DurableRpc, rpcBaseOf, type RpcReply } from './_durableRpc';

import type { DurableClient, InstanceStatus, ManagementLinks } from '../shared/durable/client';
import type { EntityRef } from '../shared/durable/entities';

/** The JS client signals "no such instance" only through the message of the error it throws. */
function isNotFound(err: unknown): boolean {
  return err instanceof Error && (/HTTP 404/.test(err.message) || /^No instance with ID/.test(err.message));
}

function unexpected(operation: string, reply: RpcReply): Error {
  return new Error(`The Durable HTTP API answered ${operation} with ${reply.status}: ${reply.body.slice(0, 200)}`);
}

export class DurableClientAdapter implements DurableClient {
  constructor(
    readonly client: df.DurableClient,
    /** The library client's own endpoint, for the hot-path calls (see _durableRpc.ts). */
    private readonly rpc?: DurableRpc,
  ) {}

  async signal(entity: EntityRef, operation: string, input: unknown): Promise<void> {
    if (this.rpc === undefined) {
      await this.client.signalEntity(new df.EntityId(entity.name, entity.key), operation, input);
      return;
    }
    const reply = await this.rpc.signalEntity(entity.name, entity.key, operation, input);
    if (reply.status !== 202) throw unexpected('signalEntity', reply);
  }

  async readState<T>(entity: EntityRef): Promise<T | undefined> {
    if (this.rpc === undefined) {
      const response = await this.client.readEntityState<T>(new df.EntityId(entity.name, entity.key));
      return response.entityExists ? response.entityState : undefined;
    }
    const reply = await this.rpc.readEntityState(entity.name, entity.key);
    if (reply.status === 404) return undefined;
    if (reply.status !== 200) throw unexpected('readEntityState', reply);
    return JSON.parse(reply.body) as T;
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

  /** `gone` when there is no such instance (a finished one accepts and ignores the event). */
  async raiseEvent(instanceId: string, event: string, data: unknown): Promise<'delivered' | 'gone'> {
    if (this.rpc !== undefined) {
      const reply = await this.rpc.raiseEvent(instanceId, event, data);
      // 410: the instance has finished; like the library, that is not an error.
      if (reply.status === 202 || reply.status === 410) return 'delivered';
      if (reply.status === 404) return 'gone';
      throw unexpected('raiseEvent', reply);
    }
    try {
      await this.client.raiseEvent(instanceId, event, data);
      return 'delivered';
    } catch (err) {
      if (isNotFound(err)) return 'gone';
      throw err;
    }
  }

  /** As `createCheckStatusResponse` builds them: the management URLs on the origin of the request answered. */
  managementLinks(instanceId: string, requestUrl: URL): ManagementLinks {
    const payload = this.client.createHttpManagementPayload(instanceId) as unknown as Record<string, string>;
    const links: Record<string, string> = {};
    for (const [key, value] of Object.entries(payload)) {
      links[key] = /^https?:\/\//.test(value) ? value.replace(new URL(value).origin, requestUrl.origin) : value;
    }
    return links;
  }
}

/** The client of this invocation (its function must declare `df.input.durableClient()`). */
export function durableClientOf(context: InvocationContext): DurableClientAdapter {
  const base = rpcBaseOf(context);
  return new DurableClientAdapter(df.getClient(context), base === undefined ? undefined : new DurableRpc(base));
}
