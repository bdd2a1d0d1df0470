/**
 * Orchestration instances over their lifetime: creation (from a client or a parent), the end (stop
 * timers, free locks, tell the parent and whoever waits) and recovery after a restart.
 */
import { randomUUID } from 'node:crypto';

import type { HostLogger } from '../log';
import { subOrchestrationFailure } from './failures';
import type { Instances, Mail, Persistence, Scheduling, Timers } from './ports';
import { EventType, type HistoryEvent, iso } from './protocol';
import { isTerminal, type OrchestrationRecord, type ParentLink } from './records';
import type { Op } from './replay';
import { OrchestrationRuntime } from './runtime';

/** What creating an instance needs of the engine. */
export type CreationHost = Pick<Instances, 'orchestrations' | 'now'> &
  Pick<Persistence, 'store' | 'clientWrite'> &
  Pick<Scheduling, 'scheduleEpisode'>;

/** What an instance's lifetime needs: its start, its end (telling parent and entities) and its recovery. */
export type LifetimeHost = CreationHost & Mail & Scheduling & Timers & { readonly log: HostLogger };

/** The ExecutionStarted event of a new execution. */
export function startEvent(
  instanceId: string,
  executionId: string,
  spec: { name: string; version: string | null; input: string | null; parent: ParentLink | null },
  now: number,
): HistoryEvent {
  const parent = spec.parent;
  return {
    EventType: EventType.ExecutionStarted,
    EventId: -1,
    Timestamp: iso(now),
    Name: spec.name,
    Version: spec.version,
    Input: spec.input,
    OrchestrationInstance: { InstanceId: instanceId, ExecutionId: executionId },
    ParentInstance:
      parent === null
        ? null
        : { OrchestrationInstance: { InstanceId: parent.instanceId, ExecutionId: parent.executionId }, TaskScheduleId: parent.taskId },
  };
}

export function newExecutionId(): string {
  return randomUUID().replace(/-/g, '');
}

export interface NewOrchestration {
  readonly name: string;
  readonly instanceId: string;
  /** JSON text of the input, or null. */
  readonly input: string | null;
  readonly version: string | null;
  readonly parent: ParentLink | null;
}

/** Creates (or replaces a finished) instance: one write, then its first episode is queued. */
export async function createOrchestration(engine: CreationHost, spec: NewOrchestration): Promise<OrchestrationRuntime> {
  const now = engine.now();
  const previous = engine.orchestrations.get(spec.instanceId);
  const executionId = newExecutionId();
  const start = startEvent(spec.instanceId, executionId, spec, now);
  const record: OrchestrationRecord = {
    instanceId: spec.instanceId,
    name: spec.name,
    version: spec.version,
    executionId,
    status: 'Pending',
    input: spec.input,
    output: null,
    customStatus: null,
    failureDetails: null,
    createdTime: now,
    lastUpdatedTime: now,
    parent: spec.parent,
    pendingStart: start,
    history: [],
    // A replaced instance may still have messages in flight; keep them resendable.
    outbox: previous?.record.outbox ?? [],
    received: previous?.record.received ?? {},
    consumedUpTo: previous?.record.consumedUpTo ?? '',
  };
  const rt = new OrchestrationRuntime(record);
  // Claim the id before the write so a concurrent start with the same id sees it taken.
  engine.orchestrations.set(spec.instanceId, rt);
  try {
    await engine.clientWrite(() => engine.store.saveOrchestration({ record, appended: [], newExecution: true, consumed: [] }));
  } catch (err) {
    if (previous === undefined) engine.orchestrations.delete(spec.instanceId);
    else engine.orchestrations.set(spec.instanceId, previous);
    throw err;
  }
  rt.markStored(record.outbox, 0);
  rt.inbox.unshift({ event: start });
  engine.scheduleEpisode(spec.instanceId);
  return rt;
}

function isParent(link: ParentLink | null, parent: { instanceId: string; executionId: string }, taskId: number): boolean {
  return link !== null && link.instanceId === parent.instanceId && link.executionId === parent.executionId && link.taskId === taskId;
}

export function startChild(
  engine: LifetimeHost,
  parent: { instanceId: string; executionId: string },
  op: Op & { kind: 'subOrchestration' },
): void {
  const link: ParentLink = { instanceId: parent.instanceId, executionId: parent.executionId, taskId: op.id };
  const existing = engine.orchestrations.get(op.instanceId);
  if (existing !== undefined && !isTerminal(existing.record.status)) {
    if (isParent(existing.record.parent, parent, op.id)) return;
    const reason = `An orchestration with the instance ID '${op.instanceId}' already exists and is not finished.`;
    engine.deliverToOrchestration(parent, {
      event: {
        EventType: EventType.SubOrchestrationInstanceFailed,
        EventId: -1,
        Timestamp: iso(engine.now()),
        TaskScheduledId: op.id,
        ...subOrchestrationFailure(reason),
      },
      dedupKey: `t${op.id}`,
      executionId: parent.executionId,
    });
    return;
  }
  const input = JSON.stringify(op.input ?? null);
  createOrchestration(engine, { name: op.name, instanceId: op.instanceId, input, version: op.version ?? null, parent: link }).catch(
    (err: unknown) =>
      engine.log('error', `Could not start sub-orchestration ${op.instanceId}: ${err instanceof Error ? err.message : String(err)}`),
  );
}

export function dropInbox(rt: OrchestrationRuntime): void {
  const dropped = rt.inbox;
  rt.inbox = [];
  for (const item of dropped) item.ack?.();
}

/** Finished: stop timers, free locks still held (the extension's ReleaseLocks), tell the parent and waiters. */
export function onTerminal(engine: LifetimeHost, rt: OrchestrationRuntime): void {
  const rec = rt.record;
  engine.timers.cancelInstance(rt.id);
  dropInbox(rt);
  for (const target of rt.lastReplay?.heldLocks ?? []) {
    engine.deliverToEntity(target, { message: { kind: 'release', id: `${rt.id}:finished`, parent: rt.id } });
  }
  notifyParent(engine, rec);
  for (const resolve of [...rt.completionWaiters]) resolve();
}

function notifyParent(engine: Pick<Mail, 'deliverToOrchestration'> & Pick<Instances, 'now'>, rec: OrchestrationRecord): void {
  if (rec.parent === null) return;
  const { instanceId, executionId, taskId } = rec.parent;
  const ts = iso(engine.now());
  const event: HistoryEvent =
    rec.status === 'Completed'
      ? { EventType: EventType.SubOrchestrationInstanceCompleted, EventId: -1, Timestamp: ts, TaskScheduledId: taskId, Result: rec.output }
      : {
          EventType: EventType.SubOrchestrationInstanceFailed,
          EventId: -1,
          Timestamp: ts,
          TaskScheduledId: taskId,
          ...subOrchestrationFailure(rec.output ?? ''),
        };
  engine.deliverToOrchestration({ instanceId, executionId }, { event, dedupKey: `t${taskId}`, executionId });
}

/** After a restart: resend the outbox, re-run unfinished activities, re-arm timers, make sure children exist. */
export function recoverOrchestration(engine: LifetimeHost, rt: OrchestrationRuntime): void {
  for (const item of [...rt.outbox]) engine.send(rt, item);
  const rec = rt.record;
  if (isTerminal(rec.status)) return;
  const exec = { instanceId: rec.instanceId, executionId: rec.executionId };
  if (rec.pendingStart !== null && rec.history.length === 0) rt.inbox.unshift({ event: rec.pendingStart });
  const scheduled = new Map<number, HistoryEvent>();
  for (const e of rec.history) {
    if (
      e.EventType === EventType.TaskScheduled ||
      e.EventType === EventType.TimerCreated ||
      e.EventType === EventType.SubOrchestrationInstanceCreated
    ) {
      scheduled.set(e.EventId, e);
    }
  }
  for (const [id, e] of scheduled) {
    if (rt.keys.has(`t${id}`)) continue;
    if (e.EventType === EventType.TaskScheduled) engine.runActivity(exec, id, e.Name, (JSON.parse(e.Input) as unknown[])[0]);
    else if (e.EventType === EventType.TimerCreated) engine.scheduleTimer(exec.instanceId, exec.executionId, id, Date.parse(e.FireAt));
    else if (e.EventType === EventType.SubOrchestrationInstanceCreated) ensureChild(engine, exec, id, e);
  }
  if (rt.inbox.length > 0 || rt.dirty) engine.scheduleEpisode(rt.id);
}

function ensureChild(engine: LifetimeHost, parent: { instanceId: string; executionId: string }, taskId: number, e: HistoryEvent): void {
  if (e.EventType !== EventType.SubOrchestrationInstanceCreated) return;
  const child = engine.orchestrations.get(e.InstanceId);
  if (child === undefined) {
    const input = e.Input;
    createOrchestration(engine, { name: e.Name, instanceId: e.InstanceId, input, version: null, parent: { ...parent, taskId } }).catch(
      (err: unknown) =>
        engine.log('error', `Could not start sub-orchestration ${e.InstanceId}: ${err instanceof Error ? err.message : String(err)}`),
    );
    return;
  }
  if (isParent(child.record.parent, parent, taskId) && isTerminal(child.record.status)) notifyParent(engine, child.record);
}
