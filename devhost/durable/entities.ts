/**
 * Entity batches, one at a time per entity, as the extension's entity scheduler runs them: the
 * queued operations (in arrival order, per sender) go to the entity function in ONE invocation,
 * followed by at most one lock request; while an orchestration holds the lock only its messages are
 * taken. A batch ends in Azure Storage's three steps, in its order, each of which a crash can cut
 * off (DurableTask.AzureStorage AzureStorageOrchestrationService.cs:1219-1282, extension
 * Listener/TaskEntityShim.cs:263-284): the outgoing messages are sent; the new state (with its
 * outbox) is written; then the inputs are consumed (client messages' keys and the receipts of
 * messages from orchestrations and entities) and only then acknowledged. So a crash after the sends
 * runs the batch again and sends again, and a crash after the state write runs its inputs again on
 * the new state, as on Azure (devhost/docs/real-host.md#entity-delivery-after-a-crash).
 */
import { randomUUID } from 'node:crypto';

import type { Execution, Instances, Mail, Persistence, Scheduling } from './ports';
import { type EntityBatchRequest, type EntityBatchResult, parseSchedulerId, schedulerId } from './protocol';
import { hasReceipt, type Origin, withReceipts } from './receipts';
import type { EntityMessage, EntityRecord, OutboxItem } from './records';
import type { EntityRuntime, QueuedEntityMessage } from './runtime';
import type { EntityCheckpoint } from './store';

/** What an entity batch needs of the engine. */
export type BatchHost = Pick<Instances, 'now'> &
  Pick<Mail, 'send' | 'mayResend'> &
  Pick<Scheduling, 'markDirty'> &
  Pick<Persistence, 'store' | 'checkpoint'> &
  Pick<Execution, 'functions' | 'entitySlots'> & {
    readonly limits: { readonly entityBatchSize: number };
    /** entityMessageReorderWindowInMinutes > 0: the extension's MessageSorter is on. */
    readonly sortsEntityMessages: boolean;
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
  try {
    const plan = await planBatch(engine, rt, selection);
    rt.outbox.push(...plan.sends);
    for (const item of plan.sends) engine.send(rt, item);
    await saveEntity(engine, rt, plan.committed, { step: 'state', consumed: [] });
    // Azure's third step, the deletion of the inputs, is always there to be cut off, even when the
    // sorter's receipts already went in with the state.
    await saveEntity(engine, rt, plan.consumed, { step: 'consumption', consumed: plan.consumedKeys });
  } catch (err) {
    // The inputs were not consumed: they run again, on whatever state was stored. Those whose
    // receipts went in with the state are the sorter's duplicates by then.
    const again = selection.consumed.filter((q) => q.origin === undefined || !hasReceipt(rt.record.received, q.origin));
    for (const q of selection.consumed) if (!again.includes(q)) q.ack?.();
    rt.queue = [...again, ...rt.queue];
    throw err;
  }
  for (const item of selection.consumed) item.ack?.();
  if (rt.queue.length > 0) engine.markDirty(rt);
}

/** Writes `record` with the live outbox; once stored, it is the entity's record. */
async function saveEntity(
  engine: BatchHost,
  rt: EntityRuntime,
  record: EntityRecord,
  write: Pick<EntityCheckpoint, 'step' | 'consumed'>,
): Promise<void> {
  const snap = rt.snapshotOutbox();
  const stored = { ...record, outbox: snap.items };
  await engine.checkpoint(`entity ${rt.id}`, () => engine.store.saveEntity({ ...write, record: stored }));
  rt.markStored(stored.outbox, snap.changes);
  rt.record = { ...record, outbox: rt.outbox };
}

interface BatchPlan {
  /** The record the state write stores: new state and lock, inputs not consumed yet. */
  readonly committed: EntityRecord;
  /** The record once the inputs are consumed. */
  readonly consumed: EntityRecord;
  /** Client messages' inbox keys the consumption deletes. */
  readonly consumedKeys: readonly string[];
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
  const result = selection.ops.length > 0 ? await invokeBatch(engine, rec, selection.ops) : undefined;
  const sends = [...responses(selection, result), ...signals(rec.id, result), ...lockMessages(selection)];
  const exists = result === undefined ? rec.exists : result.entityExists;
  const state = result === undefined ? rec.state : exists ? (result.entityState ?? null) : null;
  const lastOperationTime = selection.ops.length > 0 ? engine.now() : rec.lastOperationTime;
  const origins = selection.consumed.flatMap((q) => (q.origin === undefined ? [] : [{ message: q.message, origin: q.origin }]));
  // With a reorder window the sorter's state travels inside the committed state, so what it covers
  // is de-duplicated from the state write on (extension MessageSorter.cs:128-132, 234-238).
  const sorted = engine.sortsEntityMessages ? origins.filter((o) => sorterCovers(o.message)).map((o) => o.origin) : [];
  const mayResend = (sender: string, item: string): boolean => engine.mayResend(sender, item);
  const committedReceipts = sorted.length > 0 ? withReceipts(rec.received, sorted, mayResend) : rec.received;
  const committed: EntityRecord = { ...rec, exists, state, lastOperationTime, lockedBy: selection.lockedBy, received: committedReceipts };
  const consumedKeys = selection.consumed.flatMap((q) => (q.pendingKey === undefined ? [] : [q.pendingKey]));
  const unsorted: Origin[] = origins.map((o) => o.origin).filter((o) => !sorted.includes(o));
  const consumedUpTo = consumedKeys.reduce((max, key) => (key > max ? key : max), rec.consumedUpTo);
  const consumed = { ...committed, received: withReceipts(committedReceipts, unsorted, mayResend), consumedUpTo };
  return { committed, consumed, consumedKeys, sends };
}

/**
 * What the extension's MessageSorter orders and de-duplicates when its window is on: requests from
 * orchestrations and entities, not forwarded lock requests (position > 0) and not lock releases
 * (extension MessageSorter.cs:128; DurableTaskExtension.cs:938-955). Client signals have no origin.
 */
function sorterCovers(message: EntityMessage): boolean {
  return message.kind === 'op' || (message.kind === 'lock' && message.position === 0);
}

function responses(selection: Selection, result: EntityBatchResult | undefined): OutboxItem[] {
  const sends: OutboxItem[] = [];
  selection.ops.forEach((q, i) => {
    const m = q.message;
    if (m.kind !== 'op' || m.replyTo === undefined) return;
    const r = result?.results[i];
    const response = r === undefined || r.isError ? { result: r?.result, exceptionType: 'Error' } : { result: r.result };
    sends.push({ id: randomUUID(), to: 'orchestration', target: m.replyTo, name: m.id, input: JSON.stringify(response) });
  });
  return sends;
}

/** Signals get new ids on every run of the batch (extension TaskEntityShim.cs:688). */
function signals(self: string, result: EntityBatchResult | undefined): OutboxItem[] {
  return (result?.signals ?? []).map((s) => ({
    id: randomUUID(),
    to: 'entity',
    target: schedulerId(s.target),
    message: {
      kind: 'op',
      id: randomUUID(),
      operation: s.name,
      input: s.input === undefined || s.input === '' ? null : s.input,
      signal: true,
      parent: self,
    },
  }));
}

/** The lock request taken: forwarded to the next entity of its set, or granted to its owner. */
function lockMessages(selection: Selection): OutboxItem[] {
  const lock = selection.lock?.message;
  if (lock === undefined || lock.kind !== 'lock') return [];
  const next = lock.position + 1;
  const forward = lock.lockSet[next];
  if (forward !== undefined) return [{ id: randomUUID(), to: 'entity', target: forward, message: { ...lock, position: next } }];
  return [{ id: randomUUID(), to: 'orchestration', target: lock.owner, name: lock.id, input: JSON.stringify({ result: lockGranted }) }];
}

/** Writes back an outbox that acknowledgements changed. */
async function saveEntitySummary(engine: BatchHost, rt: EntityRuntime): Promise<void> {
  await saveEntity(engine, rt, rt.record, { step: 'summary', consumed: [] });
}
