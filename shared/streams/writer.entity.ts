/**
 * The writer entity: one per (partition, resource), the only code that ever decides what goes into
 * that resource's log. It dispatches each operation to the pure functions next to it, stores the
 * result, and reports to its ledger (and, on a handoff, to the next writer). Receipts and flush
 * batches leave it only once the state behind them is stored (writerCheckpoint.ts).
 */
import type { EntityContext } from 'durable-functions';

import { type LedgerReport, snapshotOf } from './ledger';
import { ledgerEntity, ledgerOps, writerEntity, writerOps } from './names';
import { append } from './writerAppend';
import { checkpointedPlan, hold, settle } from './writerCheckpoint';
import { flushed, flushFailed, opened, plan, requestFlush } from './writerFlush';
import { adopt, type Handoff, release } from './writerHandoff';
import type {
  AdoptRequest,
  AppendOperation,
  FlushOutcome,
  FlushRequest,
  LogCursor,
  Receipt,
  ReleaseRequest,
  WriterState,
} from './writerState';
import { initialWriterState } from './writerState';

interface Outcome {
  readonly state: WriterState;
  readonly receipts?: readonly Receipt[];
  readonly handoffs?: readonly Handoff[];
  readonly result?: unknown;
}

function input<T>(context: EntityContext<WriterState>): T {
  const value = context.df.getInput<T>();
  if (value === undefined) throw new Error(`Operation ${context.df.operationName ?? '?'} needs an input`);
  return value;
}

function run(context: EntityContext<WriterState>, state: WriterState, batch: string): Outcome {
  const key = context.df.entityKey;
  const operation = context.df.operationName ?? '';
  switch (operation) {
    case writerOps.append: {
      let current = state;
      const receipts: Receipt[] = [];
      for (const request of input<AppendOperation>(context).requests) {
        const step = append(current, request);
        current = step.state;
        receipts.push(step.receipt);
      }
      return { state: current, receipts };
    }
    case writerOps.plan: {
      const step = checkpointedPlan(state, plan(state, key, input<{ now: number }>(context).now), batch);
      return { state: step.state, result: step.plan };
    }
    case writerOps.settle:
      // Only here to start a batch after the one that held receipts: settling happens for every operation.
      return { state };
    case writerOps.opened:
      return { state: opened(state, input<{ cursor: LogCursor }>(context).cursor) };
    case writerOps.flushed:
      return flushed(state, input<FlushOutcome>(context));
    case writerOps.flushFailed: {
      const { batchId, message, at } = input<{ batchId: number; message: string; at: number }>(context);
      return { state: flushFailed(state, batchId, message, at) };
    }
    case writerOps.requestFlush: {
      const step = requestFlush(state, input<FlushRequest>(context));
      return { state: step.state, receipts: [step.receipt] };
    }
    case writerOps.release: {
      const step = release(state, input<ReleaseRequest>(context));
      return { state: step.state, receipts: [step.receipt], handoffs: step.handoffs };
    }
    case writerOps.adopt:
      return adopt(state, input<AdoptRequest>(context));
    default:
      throw new Error(`Unknown stream writer operation: ${operation || '(none)'}`);
  }
}

/** The entity batch this operation runs in: one function invocation per batch (writerCheckpoint.ts). */
function batchOf(context: EntityContext<WriterState>): string {
  const id = context.invocationId;
  if (id === '' || id === 'unknown') throw new Error('A stream writer operation needs the invocation id of its entity batch');
  return id;
}

export function streamWriterEntity(context: EntityContext<WriterState>): void {
  const batch = batchOf(context);
  const loaded = context.df.getState(() => initialWriterState()) ?? initialWriterState();
  const settled = settle(loaded, batch);
  const outcome = run(context, settled.state, batch);
  const kept = hold(outcome.state, batch, outcome.receipts ?? []);
  const state = kept.state;
  const changed = state.rev !== loaded.rev;
  if (changed) context.df.setState(state);
  const key = context.df.entityKey;
  for (const handoff of outcome.handoffs ?? []) {
    context.df.signalEntity(writerEntity(handoff.to), writerOps.adopt, { ...handoff.request, from: key });
  }
  if (kept.followUp) context.df.signalEntity(writerEntity(key), writerOps.settle, { batch });
  const receipts = settled.receipts;
  if (changed || receipts.length > 0) {
    const report: LedgerReport = {
      snapshot: snapshotOf(state),
      ...(receipts.length === 0 ? {} : { receipts }),
    };
    context.df.signalEntity(ledgerEntity(key), ledgerOps.report, report);
  }
  if (outcome.result !== undefined) context.df.return(outcome.result);
}
