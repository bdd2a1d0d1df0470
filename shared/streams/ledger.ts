/**
 * The ledger: a small projection of one writer that callers read instead of the writer itself (whose
 * state holds the whole buffer). The writer reports to it after every operation. A report is sent
 * before the writer's new state is stored (Durable sends a batch's messages first), so its snapshot
 * may describe a state that is then lost; its receipts never do: a receipt is told only by a batch
 * after the one that made it, once that state is stored (writerCheckpoint.ts).
 */
import type { FlushRecord, LogCursor, Receipt, TypeRecord, WriterState, WriterTotals } from './writerState';

/** Receipts kept per writer; a caller that polls slower than this many requests arrive re-sends. */
export const receiptCapacity = 256;

export interface WriterSnapshot {
  readonly rev: number;
  /** Events accepted so far (the next index). */
  readonly accepted: number;
  readonly flushedThrough: number;
  readonly buffered: number;
  readonly inflight: number;
  readonly maxBuffered: number;
  readonly bufferedBytes: number;
  readonly maxBufferedBytes: number;
  readonly flushEvents: number;
  readonly flushIntervalMs: number;
  readonly oldestAt: number | null;
  readonly dueAt: number | null;
  readonly cursor: LogCursor | null;
  readonly lastFlush: FlushRecord | null;
  readonly lastError: { readonly at: number; readonly message: string; readonly attempts: number } | null;
  readonly types: Readonly<Record<string, TypeRecord>>;
  readonly totals: WriterTotals;
}

export interface LedgerState {
  readonly snapshot: WriterSnapshot | null;
  /** Oldest first. */
  readonly receipts: readonly Receipt[];
}

export interface LedgerReport {
  readonly snapshot: WriterSnapshot;
  readonly receipts?: readonly Receipt[];
}

export function snapshotOf(state: WriterState): WriterSnapshot {
  return {
    rev: state.rev,
    accepted: state.nextIndex,
    flushedThrough: state.flushedThrough,
    buffered: state.buffered,
    inflight: state.inflight?.count ?? 0,
    maxBuffered: state.limits.maxBuffered,
    bufferedBytes: state.bufferBytes + (state.inflight?.bytes ?? 0),
    maxBufferedBytes: state.limits.maxBufferedBytes,
    flushEvents: state.limits.flushEvents,
    flushIntervalMs: state.limits.flushIntervalMs,
    oldestAt: state.oldestAt,
    dueAt: state.dueAt,
    cursor: state.cursor,
    lastFlush: state.lastFlush,
    lastError: state.lastError,
    types: state.types,
    totals: state.totals,
  };
}

export function emptyLedger(): LedgerState {
  return { snapshot: null, receipts: [] };
}

export function applyReport(ledger: LedgerState, report: LedgerReport): LedgerState {
  const snapshot = ledger.snapshot === null || report.snapshot.rev >= ledger.snapshot.rev ? report.snapshot : ledger.snapshot;
  if (report.receipts === undefined || report.receipts.length === 0) return { snapshot, receipts: ledger.receipts };
  const receipts = [...ledger.receipts, ...report.receipts];
  return { snapshot, receipts: receipts.length > receiptCapacity ? receipts.slice(receipts.length - receiptCapacity) : receipts };
}

export function findReceipt(ledger: LedgerState, requestId: string): Receipt | undefined {
  for (let i = ledger.receipts.length - 1; i >= 0; i--) {
    const receipt = ledger.receipts[i];
    if (receipt?.r === requestId) return receipt;
  }
  return undefined;
}

/** Unflushed events (buffered and in flight). */
function depthOfSnapshot(snapshot: WriterSnapshot): number {
  return snapshot.buffered + snapshot.inflight;
}

/** A writer's buffer depth as its ledger shows it (0 for a writer that never reported): the status view's and the depth gauge's read. */
export function depthOfLedger(ledger: LedgerState | undefined): number {
  const snapshot = ledger?.snapshot;
  return snapshot === null || snapshot === undefined ? 0 : depthOfSnapshot(snapshot);
}

/**
 * Whether the writer's oldest unflushed event waited well past its flush interval (T): its flusher
 * missed a wake-up (a kick lost with a crashed caller) or is not running, and is to be woken.
 */
export function flushOverdue(ledger: LedgerState | undefined, now: number): boolean {
  const snapshot = ledger?.snapshot;
  if (snapshot === null || snapshot === undefined || depthOfSnapshot(snapshot) === 0 || snapshot.oldestAt === null) return false;
  return now - snapshot.oldestAt > 2 * snapshot.flushIntervalMs + 5000;
}
