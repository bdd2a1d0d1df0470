/**
 * The durable-functions client behind shared/'s Durable port (shared/durable/client.ts): every
 * operation a capability needs, typed, with the library's "not found" errors turned into values and
 * its failures into AppErrors. Functions get the client from a `durableClient` input binding, one per
 * invocation.
 *
 * A failure of the Durable API is the backend being unavailable (503 with Retry-After, for the caller
 * to retry) when the extension answered 429 or 5xx (it answers 500 when its own storage call failed)
 * or the connection failed; any other answer is unexpected here, a bug (500).
 */
import type { InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';

import { clientBindingOf, DurableRpc, rpcBaseOf, type RpcReply } from './_durableRpc';

import { AppError, isAppError } from '../shared/errors';
import { isTransientStorageError } from '../shared/storage/errors';

import type { DurableClient, InstanceStatus, ManagementLinks } from '../shared/durable/client';
import type { EntityRef } from '../shared/durable/entities';

/** The JS client signals "no such instance" only through the message of the error it throws. */
function isNotFound(err: unknown): boolean {
  return err instanceof Error && (/HTTP 404/.test(err.message) || /^No instance with ID/.test(err.message));
}

/** An answer a call did not expect, with its status for `calling` to judge. */
class UnexpectedAnswer extends Error {
  constructor(
    operation: string,
    readonly status: number,
    body: string,
  ) {
    super(`The Durable HTTP API answered ${operation} with ${status}: ${body.slice(0, 200)}`);
  }
}

function unexpected(operation: string, reply: RpcReply): UnexpectedAnswer {
  return new UnexpectedAnswer(operation, reply.status, reply.body);
}

/** The status of an unexpected answer: ours, or the library client's, which gives it only in its message. */
function statusOf(err: unknown, message: string): number | undefined {
  if (err instanceof UnexpectedAnswer) return err.status;
  const m = /unexpected status code: (\d{3})|replied with an empty HTTP (\d{3})/.exec(message);
  const digits = m?.[1] ?? m?.[2];
  return digits === undefined ? undefined : Number(digits);
}

/** Runs one call to the Durable API, its failures translated in this one place (see the top of this file). */
async function calling<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isAppError(err)) throw err;
    const message = err instanceof Error ? err.message : String(err);
    const status = statusOf(err, message);
    // A connection that failed (refused, reset, timed out) reached no one: the same as a 503.
    const down = status === undefined ? isTransientStorageError(err) : status === 429 || status >= 500;
    const internal = `Durable ${operation} failed: ${message}`;
    if (down) {
      throw new AppError('DependencyUnavailable', 'The Durable Functions backend is unavailable; try again shortly', {
        internal,
        retryAfterSeconds: 1,
        cause: err,
      });
    }
    if (status !== undefined) throw new AppError('Internal', internal, { internal, cause: err });
    throw err;
  }
}

export class DurableClientAdapter implements DurableClient {
  constructor(
    readonly client: df.DurableClient,
    /** The library client's own endpoint, for the hot-path calls (see _durableRpc.ts). */
    private readonly rpc?: DurableRpc,
  ) {}

  signal(entity: EntityRef, operation: string, input: unknown): Promise<void> {
    const { rpc } = this;
    return calling('signalEntity', async () => {
      if (rpc === undefined) {
        await this.client.signalEntity(new df.EntityId(entity.name, entity.key), operation, input);
        return;
      }
      const reply = await rpc.signalEntity(entity.name, entity.key, operation, input);
      if (reply.status !== 202) throw unexpected('signalEntity', reply);
    });
  }

  readState<T>(entity: EntityRef): Promise<T | undefined> {
    const { rpc } = this;
    return calling('readEntityState', async () => {
      if (rpc === undefined) {
        const response = await this.client.readEntityState<T>(new df.EntityId(entity.name, entity.key));
        return response.entityExists ? response.entityState : undefined;
      }
      const reply = await rpc.readEntityState(entity.name, entity.key);
      if (reply.status === 404) return undefined;
      if (reply.status !== 200) throw unexpected('readEntityState', reply);
      return JSON.parse(reply.body) as T;
    });
  }

  startNew(orchestration: string, instanceId: string, input: unknown): Promise<void> {
    return calling('startNew', async () => {
      await this.client.startNew(orchestration, { instanceId, input });
    });
  }

  getStatus(instanceId: string): Promise<InstanceStatus | undefined> {
    return calling('getStatus', async () => {
      try {
        const status = await this.client.getStatus(instanceId);
        return { runtimeStatus: String(status.runtimeStatus), customStatus: status.customStatus, output: status.output };
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    });
  }

  /** `gone` when there is no such instance (a finished one accepts and ignores the event). */
  raiseEvent(instanceId: string, event: string, data: unknown): Promise<'delivered' | 'gone'> {
    const { rpc } = this;
    return calling('raiseEvent', async () => {
      if (rpc !== undefined) {
        const reply = await rpc.raiseEvent(instanceId, event, data);
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
    });
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

/**
 * The latest client an invocation made, for reads outside any invocation (the streams' depth gauge,
 * read when a metric reader collects). It holds only where the host's Durable extension listens (its
 * local RPC base URL and task hub), which stays the same for the host process's life, so any
 * invocation's client serves; no figure is kept with it. Undefined until an invocation with a
 * `durableClient` input ran in this process.
 */
let recent: DurableClientAdapter | undefined;

export function recentDurableClient(): DurableClientAdapter | undefined {
  return recent;
}

/** What the host handed the invocation's `durableClient` input, as text: the same for every invocation of one host process. */
function clientBindingText(context: InvocationContext): string | undefined {
  const data = clientBindingOf(context);
  return data === undefined || typeof data === 'string' ? data : JSON.stringify(data);
}

/** The client made from the binding text it was made with. */
let made: { readonly binding: string; readonly client: DurableClientAdapter } | undefined;

/**
 * The client of this invocation (its function must declare `df.input.durableClient()`). The library's
 * client holds nothing of an invocation (URLs, the task hub, an HTTP client), but making one checks
 * each of its URLs with validator's `isURL`: about a third of a millisecond of CPU per request on
 * the real host's worker (a CPU profile of the gates benchmark). So the client made from the same
 * binding is used again; another binding (keys rotated, another task hub) makes a new one.
 */
export function durableClientOf(context: InvocationContext): DurableClientAdapter {
  const binding = clientBindingText(context);
  if (binding !== undefined && made?.binding === binding) return (recent = made.client);
  const base = rpcBaseOf(context);
  recent = new DurableClientAdapter(df.getClient(context), base === undefined ? undefined : new DurableRpc(base));
  if (binding !== undefined) made = { binding, client: recent };
  return recent;
}
