/**
 * Entity batches, one at a time per entity, as the extension's entity scheduler runs them: the
 * queued operations (in arrival order, per sender) go to the entity function in ONE invocation,
 * followed by at most one lock request; while an orchestration holds the lock only its messages are
 * taken. State, de-duplication marks and every outgoing message are checkpointed in one write
 * before any response or signal is sent.
 */
import { randomUUID } from 'node:crypto';

import type { Execution, Instances, Mail, Persistence, Scheduling } from './ports';
import { type EntityBatchRequest, type EntityBatchResult, parseSchedulerId, schedulerId } from './protocol';
import type { EntityRecord, OutboxItem } from './records';
import type { EntityRuntime, QueuedEntityMessage } from './runtime';

/** What an entity batch needs of the engine. */
export type BatchHost = Pick<Instances, 'now'> &
  Pick<Mail, 'send'> &
  Pick<Scheduling, 'markDirty'> &
  Pick<Persistence, 'store' | 'checkpoint'> &
  Pick<Execution, 'functions' | 'entitySlots'> & {
    readonly limits: { readonly entityBatchSize: number };
    /** Whether `sender` could still resend something to `target` after a crash (its stored outbox has it). */
    mayResend(sender: string, target: string): boolean;
  };

/** The extension's `ResponseMessage.LockAcquisitionCompletion`. */
const lockGranted = 'Lock Acquisition Completed';

interface Selection {
  readonly ops: readonly QueuedEntityMessage[];
  readonly consumed: readonly QueuedEntityMessage[];
  readonly remaining: QueuedEntityMessage[];
  readonly lock: QueuedEntityMessage | undefined;
  readonly lockedBy: string | null;
}

function select(rt: EntityRuntime, maxOps: number): Selection {
  const ops: QueuedEntityMessage[] = [];
  const consumed: QueuedEntityMessage[] = [];
  const remaining: QueuedEntityMessage[] = [];
  let lockedBy = rt.record.lockedBy;
  let lock: QueuedEntityMessage | undefined;
  let skipped = false;
  let stop = false;
  for (const item of rt.queue) {
    const m = item.message;
    if (stop || (lockedBy !== null && m.parent !== lockedBy)) {
      skipped ||= !stop;
      remaining.push(item);
      continue;
    }
    if (m.kind === 'release') {
      consumed.push(item);
      if (lockedBy === m.parent) {
        lockedBy = null;
        // Messages passed over while locked come first now: start the next batch from the top.
        stop = skipped;
      }
    } else if (m.kind === 'op') {
      if (ops.length >= maxOps) {
        stop = true;
        remaining.push(item);
        continue;
      }
      ops.push(item);
      consumed.push(item);
    } else {
      consumed.push(item);
      lock = item;
      lockedBy = m.owner.instanceId;
      stop = true;
    }
  }
  return { ops, consumed, remaining, lock, lockedBy };
}

export async function runEntityWork(engine: BatchHost, rt: EntityRuntime): Promise<void> {
  const selection = select(rt, engine.limits.entityBatchSize);
  if (selection.consumed.length === 0) {
    if (rt.dirty) await saveEntitySummary(engine, rt);
    return;
  }
  rt.queue = selection.remaining;
  let plan: BatchPlan;
  try {
    plan = await planBatch(engine, rt, selection);
    const snap = rt.snapshotOutbox();
    const stored = { ...plan.record, outbox: [...snap.items, ...plan.sends] };
    const consumed = selection.consumed.flatMap((q) => (q.pendingKey === undefined ? [] : [q.pendingKey]));
    await engine.checkpoint(`entity ${rt.id}`, () => engine.store.saveEntity({ record: stored, consumed }));
    rt.markStored(stored.outbox, snap.changes);
  } catch (err) {
    rt.queue = [...selection.consumed, ...rt.queue];
    throw err;
  }
  rt.record = { ...plan.record, outbox: rt.outbox };
  rt.outbox.push(...plan.sends);
  for (const item of selection.consumed) item.ack?.();
  for (const item of plan.sends) engine.send(rt, item);
  if (rt.queue.length > 0) engine.markDirty(rt);
}

interface BatchPlan {
  readonly record: EntityRecord;
  readonly sends: readonly OutboxItem[];
}

async function invokeBatch(engine: BatchHost, rec: EntityRecord, ops: readonly QueuedEntityMessage[]): Promise<EntityBatchResult> {
  const failAll = (message: string): EntityBatchResult => ({
    entityExists: rec.exists,
    entityState: rec.state,
    results: ops.map(() => ({ isError: true, result: JSON.stringify(message) })),
    signals: [],
  });
  const self = parseSchedulerId(rec.id);
  const missing = engine.functions.check('entity', self.name);
  if (missing !== undefined) return failAll(missing);
  const request: EntityBatchRequest = {
    self,
    exists: rec.exists,
    state: rec.state,
    batch: ops.map((q) => {
      const m = q.message;
      return m.kind === 'op' ? { name: m.operation, input: m.input, isSignal: m.signal } : { name: '', input: null, isSignal: true };
    }),
  };
  const outcome = await engine.entitySlots.run(() => engine.functions.invoke('entity', self.name, { string: JSON.stringify(request) }));
  if (!outcome.ok) return failAll(outcome.error.message);
  const text = outcome.response.returnValue?.json;
  if (typeof text !== 'string') return failAll('Out of proc entities must return a valid JSON schema.');
  return JSON.parse(text) as EntityBatchResult;
}

async function planBatch(engine: BatchHost, rt: EntityRuntime, selection: Selection): Promise<BatchPlan> {
  const rec = rt.record;
  const now = engine.now();
  const result = selection.ops.length > 0 ? await invokeBatch(engine, rec, selection.ops) : undefined;
  const sends: OutboxItem[] = [];
  let nextSeq = rec.nextSeq;
  selection.ops.forEach((q, i) => {
    const m = q.message;
    if (m.kind !== 'op' || m.replyTo === undefined) return;
    const r = result?.results[i];
    const response = r === undefined || r.isError ? { result: r?.result, exceptionType: 'Error' } : { result: r.result };
    sends.push({ id: randomUUID(), to: 'orchestration', target: m.replyTo, name: m.id, input: JSON.stringify(response) });
  });
  for (const s of result?.signals ?? []) {
    sends.push({
      id: randomUUID(),
      to: 'entity',
      target: schedulerId(s.target),
      message: {
        kind: 'op',
        id: randomUUID(),
        operation: s.name,
        input: s.input === undefined || s.input === '' ? null : s.input,
        signal: true,
        parent: rec.id,
        stamp: { sender: rec.id, seq: nextSeq++ },
      },
    });
  }
  const lock = selection.lock?.message;
  if (lock !== undefined && lock.kind === 'lock') {
    const next = lock.position + 1;
    const forward = lock.lockSet[next];
    if (forward !== undefined) {
      sends.push({
        id: randomUUID(),
        to: 'entity',
        target: forward,
        message: { ...lock, position: next, stamp: { sender: rec.id, seq: nextSeq++ } },
      });
    } else {
      sends.push({
        id: randomUUID(),
        to: 'orchestration',
        target: lock.owner,
        name: lock.id,
        input: JSON.stringify({ result: lockGranted }),
      });
    }
  }
  const seen = { ...rec.seen };
  for (const q of selection.consumed) {
    const stamp = q.message.stamp;
    if (stamp !== undefined) seen[stamp.sender] = Math.max(seen[stamp.sender] ?? -1, stamp.seq);
  }
  for (const sender of Object.keys(seen)) if (!engine.mayResend(sender, rec.id)) delete seen[sender];
  const consumedUpTo = selection.consumed.reduce(
    (max, q) => (q.pendingKey !== undefined && q.pendingKey > max ? q.pendingKey : max),
    rec.consumedUpTo,
  );
  const exists = result === undefined ? rec.exists : result.entityExists;
  const state = result === undefined ? rec.state : exists ? (result.entityState ?? null) : null;
  return {
    record: {
      ...rec,
      exists,
      state,
      lastOperationTime: selection.ops.length > 0 ? now : rec.lastOperationTime,
      lockedBy: selection.lockedBy,
      seen,
      nextSeq,
      consumedUpTo,
    },
    sends,
  };
}

async function saveEntitySummary(engine: BatchHost, rt: EntityRuntime): Promise<void> {
  const snap = rt.snapshotOutbox();
  const stored = { ...rt.record, outbox: snap.items };
  await engine.checkpoint(`entity ${rt.id}`, () => engine.store.saveEntity({ record: stored, consumed: [] }));
  rt.markStored(stored.outbox, snap.changes);
}
