/**
 * The writer entity: one per (partition, resource), the only code that ever decides what goes into
 * that resource's log. It dispatches each operation to the pure functions next to it, stores the
 * result, and reports to its ledger (and, on a handoff, to the next writer).
 */
import type { EntityContext } from 'durable-functions';

import { type LedgerReport, snapshotOf } from './ledger';
import { ledgerEntity, ledgerOps, writerEntity, writerOps } from './names';
import { append } from './writerAppend';
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

function run(context: EntityContext<WriterState>, state: WriterState): Outcome {
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
      const step = plan(state, key, input<{ now: number }>(context).now);
      return { state: step.state, result: step.plan };
    }
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

export function streamWriterEntity(context: EntityContext<WriterState>): void {
  const before = context.df.getState(() => initialWriterState()) ?? initialWriterState();
  const outcome = run(context, before);
  const changed = outcome.state.rev !== before.rev;
  if (changed) context.df.setState(outcome.state);
  const key = context.df.entityKey;
  for (const handoff of outcome.handoffs ?? []) {
    context.df.signalEntity(writerEntity(handoff.to), writerOps.adopt, { ...handoff.request, from: key });
  }
  const receipts = outcome.receipts ?? [];
  if (changed || receipts.length > 0) {
    const report: LedgerReport = {
      snapshot: snapshotOf(outcome.state),
      ...(receipts.length === 0 ? {} : { receipts }),
    };
    context.df.signalEntity(ledgerEntity(key), ledgerOps.report, report);
  }
  if (outcome.result !== undefined) context.df.return(outcome.result);
}
