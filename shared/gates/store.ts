/**
 * The gates' storage: every read and write of the `gates` table (rows.ts says what lives where).
 * Each change of a gate is one entity group transaction that replaces the gate row with If-Match —
 * so it is applied to exactly the state it was computed from, or not at all — together with the
 * rows that change with it (registered runs, the release, the audit record).
 */
import { type TableClient, type TableTransactionResponse, type TransactionAction } from '@azure/data-tables';

import { hasStatus, statusOfError, translateStorageError } from '../storage/errors';
import { listPage, type Page, type PageRequest } from '../storage/list';
import type { ActionOutcome, GateRecord, ReleaseRecord, RunRecord } from './operations';
import {
  actionJsonOf,
  type FanOutLease,
  fanOutEntity,
  fanOutLeaseOf,
  type GateEntity,
  gateEntity,
  gateRecordOf,
  gateRowKey,
  odata,
  outcomeProperties,
  releaseRecordOf,
  rowKeys,
  runRecordOf,
} from './rows';
import { holderRowKey, holderRowRange } from './waiterShares';

/** Operations one entity group transaction may hold (the service's limit). */
export const maxTransactionOperations = 100;

export interface Versioned<T> {
  readonly value: T;
  readonly etag: string;
}

/** A stored run, with what performing its action needs. */
export interface StoredRun extends Versioned<RunRecord> {
  /** The action as JSON (for runs that have one). */
  readonly actionJson: string | undefined;
}

export type CommitOutcome =
  | { readonly ok: true; readonly etag: string }
  /** The gate row changed since it was read. */
  | { readonly ok: false; readonly reason: 'stale' }
  /** Row `index` of the rows to insert exists already (nothing was written). */
  | { readonly ok: false; readonly reason: 'exists'; readonly index: number };

/** The index of the failed operation: the service prefixes the message with it ("2:The specified entity …"). */
function failedIndex(err: unknown): number | undefined {
  const m = err instanceof Error ? /^(\d+):/.exec(err.message) : null;
  return m === null ? undefined : Number(m[1]);
}

export interface PendingQuery {
  /** The shards of run keys (rows.ts `runShards`) to look in: from the first (inclusive) to the second (exclusive). */
  readonly shards: readonly [number, number];
  /** Runs registered with generations `from`..`to` (a release lets go of exactly those), not late. */
  readonly from: number;
  readonly to: number;
}

export class GateStore {
  constructor(private readonly table: () => Promise<TableClient>) {}

  async readGate(name: string): Promise<Versioned<GateRecord> | undefined> {
    const table = await this.table();
    try {
      const row = await table.getEntity<Record<string, unknown>>(name, gateRowKey);
      return { value: gateRecordOf(row), etag: row.etag };
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading gate ${name}`);
    }
  }

  /** A page of gates in name order, read from the gate rows (one per gate); a row that cannot be read is listed as unreadable. */
  async listGates(page: PageRequest): Promise<Page<GateRecord>> {
    const query = { filter: `RowKey eq ${odata(gateRowKey)}`, list: 'gates', doing: 'listing gates' };
    return listPage(await this.table(), query, page, gateRecordOf);
  }

  /** Inserts a new gate with its first audit record; false when a gate of that name exists. */
  async insertGate(record: GateRecord, audit: GateEntity): Promise<boolean> {
    const table = await this.table();
    try {
      await table.submitTransaction([
        ['create', gateEntity(record)],
        ['create', audit],
      ]);
      return true;
    } catch (err) {
      if (hasStatus(err, 409)) return false;
      throw translateStorageError(err, `creating gate ${record.name}`);
    }
  }

  /**
   * Replaces the gate row read with `etag` by `record` and inserts `rows` with it, atomically. At
   * most `maxTransactionOperations - 1` rows.
   */
  /** `counts`: rows replaced whatever they hold (the waiters' counts, which only change with the gate row). */
  async commit(record: GateRecord, etag: string, rows: readonly GateEntity[], counts: readonly GateEntity[] = []): Promise<CommitOutcome> {
    const table = await this.table();
    const actions: TransactionAction[] = [
      ['update', gateEntity(record), 'Replace', { etag }],
      ...rows.map((row): TransactionAction => ['create', row]),
      ...counts.map((row): TransactionAction => ['upsert', row, 'Replace']),
    ];
    let response: TableTransactionResponse;
    try {
      response = await table.submitTransaction(actions);
    } catch (err) {
      const status = statusOfError(err);
      const index = failedIndex(err);
      if (status === 412) return { ok: false, reason: 'stale' };
      if (status === 409 && index !== undefined && index > 0) return { ok: false, reason: 'exists', index: index - 1 };
      throw translateStorageError(err, `changing gate ${record.name}`);
    }
    const newEtag = response.subResponses[0]?.etag;
    if (newEtag === undefined)
      throw translateStorageError(new Error('The transaction answered no ETag for the gate row'), `changing gate ${record.name}`);
    return { ok: true, etag: newEtag };
  }

  /** The waiting runs each holder has (./waiterShares.ts), by holder; 0 for one without a row. */
  async readHeld(gate: string, openSince: number, holders: readonly string[]): Promise<Map<string, number>> {
    const table = await this.table();
    const read = async (holder: string): Promise<[string, number]> => {
      try {
        const row = await table.getEntity<{ n?: unknown }>(gate, holderRowKey(openSince, holder));
        return [holder, typeof row.n === 'number' ? row.n : 0];
      } catch (err) {
        if (hasStatus(err, 404)) return [holder, 0];
        throw translateStorageError(err, `reading the waiters of gate ${gate}`);
      }
    };
    return new Map(await Promise.all(holders.map(read)));
  }

  /**
   * Deletes the holder rows of the runs released through `openSince` (./waiterShares.ts): rows
   * nothing writes any more, so an unconditional delete is safe; a row gone meanwhile (another
   * sweep) is skipped. Answers how many went.
   */
  async deleteReleasedHolds(gate: string, openSince: number): Promise<number> {
    const table = await this.table();
    const [from, to] = holderRowRange(openSince);
    const filter = `PartitionKey eq ${odata(gate)} and RowKey ge ${odata(from)} and RowKey lt ${odata(to)}`;
    let deleted = 0;
    try {
      const pages = table.listEntities({ queryOptions: { filter, select: ['RowKey'] } }).byPage({ maxPageSize: maxTransactionOperations });
      for await (const page of pages) {
        deleted += await this.deleteRows(
          table,
          gate,
          page.map((row) => row.rowKey ?? ''),
        );
      }
    } catch (err) {
      throw translateStorageError(err, `deleting the released waiter counts of gate ${gate}`);
    }
    return deleted;
  }

  /** One transaction for the rows; when one is gone already, the rest one by one. */
  private async deleteRows(table: TableClient, gate: string, keys: readonly string[]): Promise<number> {
    if (keys.length === 0) return 0;
    try {
      await table.submitTransaction(keys.map((rowKey): TransactionAction => ['delete', { partitionKey: gate, rowKey }]));
      return keys.length;
    } catch (err) {
      if (!hasStatus(err, 404)) throw err;
    }
    let deleted = 0;
    for (const rowKey of keys) {
      try {
        await table.deleteEntity(gate, rowKey);
        deleted++;
      } catch (err) {
        if (!hasStatus(err, 404)) throw err;
      }
    }
    return deleted;
  }

  async readRun(gate: string, runId: string): Promise<StoredRun | undefined> {
    const table = await this.table();
    try {
      const row = await table.getEntity<Record<string, unknown>>(gate, rowKeys.run(runId));
      return { value: runRecordOf(row), etag: row.etag, actionJson: actionJsonOf(row) };
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading run ${runId} of gate ${gate}`);
    }
  }

  /** Writes the releasing instance's lease on its fan-out of release `generation` (only that instance writes it). */
  async writeFanOut(gate: string, generation: number, lease: FanOutLease): Promise<void> {
    const table = await this.table();
    try {
      await table.upsertEntity(fanOutEntity(gate, generation, lease), 'Replace');
    } catch (err) {
      throw translateStorageError(err, `writing the fan-out lease of gate ${gate}`);
    }
  }

  /** The lease on the fan-out of release `generation`; undefined when none was written. */
  async readFanOut(gate: string, generation: number): Promise<FanOutLease | undefined> {
    const table = await this.table();
    try {
      return fanOutLeaseOf(await table.getEntity<Record<string, unknown>>(gate, rowKeys.fanOut(generation)));
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading the fan-out lease of gate ${gate}`);
    }
  }

  /** The first release of generation `generation` or later (the one that let a run of `generation` go). */
  async releaseFrom(gate: string, generation: number): Promise<ReleaseRecord | undefined> {
    const table = await this.table();
    const filter = `PartitionKey eq ${odata(gate)} and RowKey ge ${odata(rowKeys.release(generation))} and RowKey lt ${odata(rowKeys.releaseRange[1])}`;
    try {
      for await (const row of table.listEntities<Record<string, unknown>>({ queryOptions: { filter } })) return releaseRecordOf(row);
    } catch (err) {
      throw translateStorageError(err, `reading the releases of gate ${gate}`);
    }
    return undefined;
  }

  /** Runs of the query whose action is still to be performed, page by page. */
  async *pendingActions(gate: string, query: PendingQuery): AsyncGenerator<StoredRun[]> {
    const table = await this.table();
    const [from, to] = rowKeys.runRange(...query.shards);
    const filter =
      `PartitionKey eq ${odata(gate)} and RowKey ge ${odata(from)} and RowKey lt ${odata(to)} and actionState eq 'pending' ` +
      `and late eq false and generation ge ${query.from} and generation le ${query.to}`;
    try {
      for await (const page of table.listEntities<Record<string, unknown>>({ queryOptions: { filter } }).byPage({ maxPageSize: 1000 })) {
        yield page.map((row) => ({ value: runRecordOf(row), etag: row.etag, actionJson: actionJsonOf(row) }));
      }
    } catch (err) {
      throw translateStorageError(err, `listing the pending actions of gate ${gate}`);
    }
  }

  /**
   * Records each run's action outcome with If-Match on the row it was read as, so an outcome is
   * recorded once however many workers performed the action (a worker that lost the race records
   * nothing). Returns the runs this call recorded.
   */
  async recordOutcomes(gate: string, items: readonly { readonly run: StoredRun; readonly outcome: ActionOutcome }[]): Promise<number> {
    const table = await this.table();
    let recorded = 0;
    for (let i = 0; i < items.length; i += maxTransactionOperations) {
      const chunk = items.slice(i, i + maxTransactionOperations);
      const merge = ({ run, outcome }: (typeof chunk)[number]): TransactionAction => [
        'update',
        { partitionKey: gate, rowKey: rowKeys.run(run.value.runId), ...outcomeProperties(outcome) },
        'Merge',
        { etag: run.etag },
      ];
      try {
        await table.submitTransaction(chunk.map(merge));
        recorded += chunk.length;
        continue;
      } catch (err) {
        if (!hasStatus(err, 412) && !hasStatus(err, 404)) throw translateStorageError(err, `recording actions of gate ${gate}`);
      }
      // Some other worker recorded one of them: record the rest one by one.
      for (const { run, outcome } of chunk) {
        try {
          await table.updateEntity({ partitionKey: gate, rowKey: rowKeys.run(run.value.runId), ...outcomeProperties(outcome) }, 'Merge', {
            etag: run.etag,
          });
          recorded++;
        } catch (err) {
          if (!hasStatus(err, 412) && !hasStatus(err, 404))
            throw translateStorageError(err, `recording the action of run ${run.value.runId}`);
        }
      }
    }
    return recorded;
  }
}
