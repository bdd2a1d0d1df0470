/**
 * Ending a job's unfinished items with one outcome: a cancel's `cancelled` (./cancel.ts) and an idle
 * job's `expired` (./expiry.ts). Every item without a final result (none yet, or `retrying`) gets it,
 * insert-if-absent like any result, so an item a worker finished first keeps its result and the
 * tallies stay exact; repeating it writes only what is missing.
 */
import type { JobRecord } from '../ledger/jobRecord';
import type { ResultStore } from '../ledger/resultStore';
import type { ItemResult } from '../ledger/results';
import type { Enqueuer } from './enqueue';

export interface ItemsOutcome {
  readonly status: 'cancelled' | 'failed';
  readonly code: string;
  readonly reason: string;
}

export interface CloseItemsDeps {
  readonly results: ResultStore;
  readonly enqueuer: Pick<Enqueuer, 'readInput'>;
}

/** Records `outcome` for every item of `job` without a final result; how many were open and how many it wrote. */
export async function closeOpenItems(
  deps: CloseItemsDeps,
  job: JobRecord,
  outcome: ItemsOutcome,
): Promise<{ open: number; recorded: number }> {
  const rows = await deps.results.allRows(job.id);
  const input = await deps.enqueuer.readInput(job);
  const open: ItemResult[] = input.items
    .filter((item) => {
      const row = rows.get(item.id);
      return row === undefined || row.status === 'retrying';
    })
    .map((item) => ({ id: item.id, ...outcome, attempts: 0, envelope: '', claimCheck: false }));
  const { recorded } = await deps.results.record(job.id, job.round, open, false, rows);
  return { open: open.length, recorded };
}
