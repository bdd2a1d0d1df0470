/**
 * What a Durable client can do (the extension's `DurableClient` + `HttpApiHandler` rules): start,
 * query, raise, terminate, suspend, resume, purge, and signal/read/list entities. Every accepted
 * message is made durable before the call returns. Failures carry the HTTP status the extension
 * answers with.
 */
import { randomUUID } from 'node:crypto';

import { createOrchestration, type CreationHost } from './instances';
import type { Execution, Instances, Mail } from './ports';
import { clientSchedulerId, EventType, type HistoryEvent, iso } from './protocol';
import { isTerminal, type OrchestrationRecord } from './records';
import { type InstanceQuery, matches, statusPayload, type StatusOptions, type StatusPayload, statusTime, toJToken } from './status';
import type { InboxKeys } from './store';
import { DevhostError } from '../errors';

/** What a client needs of the engine. */
export type ClientHost = CreationHost &
  Instances &
  Pick<Mail, 'deliverToOrchestration' | 'deliverToEntity'> &
  Pick<Execution, 'functions'> & { readonly inboxKeys: InboxKeys };

/** A call the Durable HTTP API refuses with `status`. */
export function clientRefusal(status: number, message: string): DevhostError {
  return new DevhostError('DurableClientRefused', message, status);
}

export interface EntityStatus {
  readonly entityId: { readonly name: string; readonly key: string };
  readonly lastOperationTime: string;
  readonly state?: unknown;
}

export interface Page<T> {
  readonly items: readonly T[];
  readonly continuation: string | undefined;
}

function validateInstanceId(id: string): void {
  if (id.length > 256) throw clientRefusal(400, 'Instance ID lengths must not exceed 256 characters.');
  if (id.startsWith('@')) throw clientRefusal(400, 'Orchestration instance ids must not start with @.');
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\\/#?\u0000-\u001f\u007f]/.test(id)) {
    throw clientRefusal(400, 'Instance ID must not contain /, \\, #, ?, or control characters.');
  }
}

function validJson(text: string, what: string): void {
  try {
    JSON.parse(text);
  } catch {
    throw clientRefusal(400, `Invalid JSON content (${what}).`);
  }
}

function page<T>(all: readonly T[], top: number | undefined, continuation: string | undefined): Page<T> {
  const start = continuation === undefined || continuation === '' ? 0 : Number(Buffer.from(continuation, 'base64url').toString('utf8'));
  if (!Number.isInteger(start) || start < 0) throw clientRefusal(400, 'Invalid continuation token.');
  const size = top !== undefined && top > 0 ? top : 100;
  const items = all.slice(start, start + size);
  const next = start + size < all.length ? Buffer.from(String(start + size), 'utf8').toString('base64url') : undefined;
  return { items, continuation: next };
}

export class DurableClientApi {
  constructor(private readonly engine: ClientHost) {}

  now(): number {
    return this.engine.now();
  }

  /** Starts an instance; a non-finished instance with the same id is a 409, a finished one is replaced. */
  async start(
    name: string,
    options: { instanceId?: string | undefined; input?: string | null; version?: string | null } = {},
  ): Promise<string> {
    const instanceId = options.instanceId === undefined || options.instanceId === '' ? randomUUID().replace(/-/g, '') : options.instanceId;
    validateInstanceId(instanceId);
    const input = options.input ?? null;
    if (input !== null) validJson(input, 'input');
    const existing = this.engine.orchestrations.get(instanceId);
    if (existing !== undefined && !isTerminal(existing.record.status)) {
      throw clientRefusal(409, `An Orchestration instance with the status ${existing.record.status} already exists.`);
    }
    await createOrchestration(this.engine, { name, instanceId, input, version: options.version ?? null, parent: null });
    return instanceId;
  }

  record(instanceId: string): OrchestrationRecord | undefined {
    return this.engine.orchestrations.get(instanceId)?.record;
  }

  status(instanceId: string, options: StatusOptions = {}): StatusPayload | undefined {
    const rec = this.record(instanceId);
    return rec === undefined ? undefined : statusPayload(rec, options);
  }

  list(query: InstanceQuery & StatusOptions & { top?: number | undefined; continuation?: string | undefined }): Page<StatusPayload> {
    const all = [...this.engine.orchestrations.values()]
      .map((rt) => rt.record)
      .filter((rec) => matches(rec, query))
      .sort((a, b) => a.createdTime - b.createdTime || (a.instanceId < b.instanceId ? -1 : 1));
    const result = page(all, query.top, query.continuation);
    return {
      items: result.items.map((rec) => statusPayload(rec, { showInput: query.showInput ?? true })),
      continuation: result.continuation,
    };
  }

  /** Resolves once the instance has finished, or after `timeoutMs` (wall-clock: it backs an HTTP wait). */
  waitForCompletion(instanceId: string, timeoutMs: number): Promise<void> {
    const rt = this.engine.orchestrations.get(instanceId);
    if (rt === undefined || isTerminal(rt.record.status)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        rt.completionWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      rt.completionWaiters.add(done);
    });
  }

  async raiseEvent(instanceId: string, name: string, data: string): Promise<void> {
    validJson(data, 'event data');
    await this.accept(instanceId, {
      EventType: EventType.EventRaised,
      EventId: -1,
      Timestamp: iso(this.engine.now()),
      Name: name,
      Input: data,
    });
  }

  terminate(instanceId: string, reason: string | null): Promise<void> {
    return this.accept(instanceId, {
      EventType: EventType.ExecutionTerminated,
      EventId: -1,
      Timestamp: iso(this.engine.now()),
      Input: reason,
    });
  }

  suspend(instanceId: string, reason: string | null): Promise<void> {
    return this.accept(instanceId, {
      EventType: EventType.ExecutionSuspended,
      EventId: -1,
      Timestamp: iso(this.engine.now()),
      Reason: reason,
    });
  }

  resume(instanceId: string, reason: string | null): Promise<void> {
    return this.accept(instanceId, {
      EventType: EventType.ExecutionResumed,
      EventId: -1,
      Timestamp: iso(this.engine.now()),
      Reason: reason,
    });
  }

  /** 404 unknown, 410 finished; otherwise the message is stored, then queued. */
  private async accept(instanceId: string, event: HistoryEvent): Promise<void> {
    const rec = this.record(instanceId);
    if (rec === undefined) throw clientRefusal(404, `No instance with ID '${instanceId}' found.`);
    if (isTerminal(rec.status)) throw clientRefusal(410, `The instance '${instanceId}' has already finished (${rec.status}).`);
    const key = this.engine.inboxKeys.next();
    await this.engine.clientWrite(() => this.engine.store.enqueueOrchestrationEvent(instanceId, { key, event }));
    this.engine.deliverToOrchestration({ instanceId }, { event, pendingKey: key });
  }

  async purge(instanceId: string): Promise<number> {
    const rec = this.record(instanceId);
    if (rec === undefined) throw clientRefusal(404, `No instance with ID '${instanceId}' found.`);
    if (!isTerminal(rec.status)) {
      throw clientRefusal(
        412,
        `Only orchestrations in a terminal state can be purged, but the orchestration with instance ID ${instanceId} has status ${rec.status}`,
      );
    }
    await this.engine.clientWrite(() => this.engine.store.deleteOrchestration(instanceId));
    this.engine.orchestrations.delete(instanceId);
    return 1;
  }

  /** Purges finished instances created in the range (the devhost never purges running ones). */
  async purgeBy(query: InstanceQuery): Promise<number> {
    const targets = [...this.engine.orchestrations.values()]
      .map((rt) => rt.record)
      .filter((rec) => isTerminal(rec.status) && matches(rec, query));
    for (const rec of targets) {
      await this.engine.clientWrite(() => this.engine.store.deleteOrchestration(rec.instanceId));
      this.engine.orchestrations.delete(rec.instanceId);
    }
    return targets.length;
  }

  /** Signals an entity from a client: stored first, then queued. `input` is JSON text or null. */
  async signalEntity(name: string, key: string, operation: string, input: string | null): Promise<void> {
    const missing = this.engine.functions.check('entity', name);
    if (missing !== undefined) throw clientRefusal(400, missing);
    const target = clientSchedulerId({ name, key });
    const message = { kind: 'op' as const, id: randomUUID(), operation, input, signal: true, parent: null };
    const pendingKey = this.engine.inboxKeys.next();
    await this.engine.clientWrite(() => this.engine.store.enqueueEntityMessage(target, { key: pendingKey, message }));
    this.engine.deliverToEntity(target, { message, pendingKey });
  }

  readEntity(name: string, key: string): { exists: boolean; state: unknown } {
    const rec = this.engine.entities.get(clientSchedulerId({ name, key }))?.record;
    return rec === undefined || !rec.exists ? { exists: false, state: undefined } : { exists: true, state: toJToken(rec.state) };
  }

  listEntities(
    name: string | undefined,
    query: {
      fetchState?: boolean;
      top?: number | undefined;
      continuation?: string | undefined;
      from?: number | undefined;
      to?: number | undefined;
    },
  ): Page<EntityStatus> {
    const prefix = name === undefined || name === '' ? '@' : `@${name.toLowerCase()}@`;
    const all = [...this.engine.entities.values()]
      .map((rt) => rt.record)
      .filter((rec) => rec.exists && rec.id.startsWith(prefix))
      .filter(
        (rec) =>
          (query.from === undefined || rec.lastOperationTime >= query.from) &&
          (query.to === undefined || rec.lastOperationTime <= query.to),
      )
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    const result = page(all, query.top, query.continuation);
    return {
      items: result.items.map((rec) => {
        const at = rec.id.indexOf('@', 1);
        return {
          entityId: { name: rec.id.slice(1, at), key: rec.id.slice(at + 1) },
          lastOperationTime: statusTime(rec.lastOperationTime),
          ...(query.fetchState === true ? { state: toJToken(rec.state) } : {}),
        };
      }),
      continuation: result.continuation,
    };
  }
}
