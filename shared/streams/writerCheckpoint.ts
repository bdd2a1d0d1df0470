/**
 * What the writer may tell the world, given when Durable stores its state.
 *
 * The Azure Storage provider completes an entity batch (one work item, one function invocation)
 * by sending its outgoing messages FIRST and writing the entity's new state AFTER
 * (DurableTask.AzureStorage `AzureStorageOrchestrationService.CompleteTaskOrchestrationWorkItemAsync`:
 * "First, add new messages into the queue. If a failure happens after this, duplicate messages
 * will be written after the retry"). An instance killed between the two leaves the batch's signals
 * delivered and its state never written; the messages it had taken come back only after
 * `controlQueueVisibilityTimeout`, while newer ones are processed first against the older state.
 * Observed on the real host (docs/scale-out.md#streams): a receipt sent that way answered a
 * producer `202`, the producer sent its next events, the new owner accepted them first, and the
 * redelivered append's events were then below the producer's mark — taken for duplicates, lost.
 *
 * The rule: the writer acts outside itself only on state an EARLIER batch produced. A batch starts
 * from stored state (the previous batch's work item completed, or its replacement reloaded what was
 * stored), so whatever an earlier batch left in it is durable; only what this batch did may still
 * be lost. Hence:
 * - a receipt is held in the state with the batch that made it, and told to the ledger by the next
 *   batch (any operation; the writer signals itself `settle` so there always is one). A receipt a
 *   caller sees — `202 ack=buffered` — therefore means the events are stored and will be flushed;
 * - a flush batch is handed to the flusher only by a later batch than the one that took it out of
 *   the buffer (`taken`: the flusher plans again at once). A flush the flusher performs is thus
 *   always of stored bytes at a stored position, so a retry rewrites the same bytes
 *   (appendLog.ts), never a different batch under the same id.
 *
 * The batch is told by the function invocation id: the durable-functions SDK runs a whole batch's
 * operations in one invocation (`Entity.handle` loops over `batch`), and each work item is a new one.
 */
import type { PlanStep } from './writerFlush';
import type { HeldReceipt, Receipt, WriterState } from './writerState';

export interface Settled {
  readonly state: WriterState;
  /** Receipts of earlier batches, stored, now to be told. */
  readonly receipts: readonly Receipt[];
}

/** Takes out the receipts an earlier batch held: the state that made them is stored. */
export function settle(state: WriterState, batch: string): Settled {
  const held = state.held ?? [];
  const ready = held.filter((h) => h.b !== batch);
  if (ready.length === 0) return { state, receipts: [] };
  const waiting = held.filter((h) => h.b === batch);
  const { held: _told, ...rest } = state;
  const next: WriterState = waiting.length === 0 ? rest : { ...rest, held: waiting };
  return { state: { ...next, rev: state.rev + 1 }, receipts: ready.map((h) => h.receipt) };
}

export interface Held {
  readonly state: WriterState;
  /** The first receipt this batch holds: the writer must make sure a later batch comes (`settle`). */
  readonly followUp: boolean;
}

/** Keeps this batch's receipts in the state until a later batch tells them. */
export function hold(state: WriterState, batch: string, receipts: readonly Receipt[]): Held {
  if (receipts.length === 0) return { state, followUp: false };
  const held: readonly HeldReceipt[] = state.held ?? [];
  const followUp = !held.some((h) => h.b === batch);
  return { state: { ...state, held: [...held, ...receipts.map((receipt) => ({ b: batch, receipt }))], rev: state.rev + 1 }, followUp };
}

/**
 * The flush policy's step (writerFlush.ts `plan`) under the rule: a batch it took out of the buffer
 * just now is marked with this batch and answered `taken`; one taken by this same batch (a second
 * plan in it, e.g. a redelivered one) is `taken` too; one taken earlier is handed out.
 */
export function checkpointedPlan(before: WriterState, step: PlanStep, batch: string): PlanStep {
  if (step.plan.kind !== 'flush') return step;
  const inflight = before.inflight;
  if (inflight === null) {
    const taken = { ...step.plan.batch, takenIn: batch };
    return { state: { ...step.state, inflight: taken }, plan: { kind: 'taken' } };
  }
  return inflight.takenIn === batch ? { state: step.state, plan: { kind: 'taken' } } : step;
}
