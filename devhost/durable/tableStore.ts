/**
 * The durable store on Azure Table storage (Azurite locally), one table per task hub named
 * `<hub>DevhostState`. Each instance and entity is a partition: a summary row `s`, history rows
 * `h:<executionId>:<n>` (one per checkpoint, the events it appended) and inbox rows `p:<key>` for
 * accepted client messages. A checkpoint is one entity-group transaction (history rows + summary +
 * consumed inbox rows); when it is too big for one, history rows go first and the summary last,
 * and loading ignores history rows the summary does not count — so a torn checkpoint never shows.
 */
import { TableClient, type TableEntity, type TransactionAction } from '@azure/data-tables';

import type { HistoryEvent } from './protocol';
import type { EntityMessage, EntityRecord, OrchestrationRecord, PendingEntityMessage, PendingOrchestrationEvent } from './records';
import { newEntityRecord } from './runtime';
import type { DurableStore, EntityCheckpoint, LoadedEntity, LoadedOrchestration, LoadedState, OrchestrationCheckpoint } from './store';

/** A string property holds 32K UTF-16 characters; a row at most 1 MiB. */
const pieceChars = 30_000;
const piecesPerRow = 15;
const rowChars = pieceChars * piecesPerRow;
/** Entity-group transactions: 100 operations and 4 MiB. */
const maxBatchOps = 100;
const maxBatchChars = 1_500_000;

type Row = TableEntity<Record<string, unknown>>;

interface Summary {
  readonly executionId: string;
  readonly rows: number;
}

export function tableNameForHub(hub: string): string {
  const clean = hub.replace(/[^A-Za-z0-9]/g, '');
  const lettered = /^[A-Za-z]/.test(clean) ? clean : `h${clean}`;
  return `${lettered.slice(0, 50)}DevhostState`;
}

function pieces(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0, n = 0; i < text.length || n === 0; i += pieceChars, n++) out[`d${n}`] = text.slice(i, i + pieceChars);
  return out;
}

function joinPieces(row: Row): string {
  let text = '';
  for (let n = 0; typeof row[`d${n}`] === 'string'; n++) text += row[`d${n}`] as string;
  return text;
}

function partition(kind: 'o' | 'e', id: string): string {
  return `${kind}${encodeURIComponent(id)}`;
}

function historyRowKey(executionId: string, n: number): string {
  return `h:${executionId}:${String(n).padStart(8, '0')}`;
}

/** Splits events into row-sized JSON arrays. */
function historyRows(events: readonly HistoryEvent[]): string[] {
  const rows: string[] = [];
  let current: string[] = [];
  let size = 2;
  for (const event of events) {
    const json = JSON.stringify(event);
    if (json.length + 1 > rowChars)
      throw new Error(`A history event is larger than ${rowChars} characters; the devhost store cannot hold it.`);
    if (size + json.length + 1 > rowChars && current.length > 0) {
      rows.push(`[${current.join(',')}]`);
      current = [];
      size = 2;
    }
    current.push(json);
    size += json.length + 1;
  }
  if (current.length > 0) rows.push(`[${current.join(',')}]`);
  return rows;
}

function checkRowSize(text: string, what: string): void {
  if (text.length > rowChars) throw new Error(`${what} is larger than ${rowChars} characters; the devhost store cannot hold it.`);
}

export class TableStore implements DurableStore {
  readonly kind = 'table';
  private readonly client: TableClient;
  private ready: Promise<void> | undefined;
  /** History rows stored for each instance's current execution. */
  private readonly summaries = new Map<string, Summary>();

  constructor(
    connectionString: string,
    readonly tableName: string,
  ) {
    this.client = TableClient.fromConnectionString(connectionString, tableName, { allowInsecureConnection: true });
  }

  private table(): Promise<void> {
    this.ready ??= this.client.createTable();
    return this.ready;
  }

  async load(): Promise<LoadedState> {
    await this.table();
    const partitions = new Map<string, Row[]>();
    for await (const result of this.client.listEntities<Record<string, unknown>>()) {
      const row: Row = { ...result, partitionKey: result.partitionKey ?? '', rowKey: result.rowKey ?? '' };
      const list = partitions.get(row.partitionKey) ?? [];
      list.push(row);
      partitions.set(row.partitionKey, list);
    }
    const orchestrations: LoadedOrchestration[] = [];
    const entities: LoadedEntity[] = [];
    for (const [pk, rows] of partitions) {
      rows.sort((a, b) => (a.rowKey < b.rowKey ? -1 : a.rowKey > b.rowKey ? 1 : 0));
      const summary = rows.find((r) => r.rowKey === 's');
      if (pk.startsWith('o')) {
        if (summary === undefined) continue;
        orchestrations.push(this.loadOrchestration(summary, rows));
      } else if (pk.startsWith('e')) {
        entities.push(this.loadEntity(decodeURIComponent(pk.slice(1)), summary, rows));
      }
    }
    return { orchestrations, entities };
  }

  private loadOrchestration(summary: Row, rows: readonly Row[]): LoadedOrchestration {
    const record = JSON.parse(joinPieces(summary)) as OrchestrationRecord;
    const stored = Number(summary.rows ?? 0);
    const history: HistoryEvent[] = [];
    for (let n = 0; n < stored; n++) {
      const row = rows.find((r) => r.rowKey === historyRowKey(record.executionId, n));
      if (row === undefined) throw new Error(`History row ${n} of ${record.instanceId} is missing from ${this.tableName}`);
      history.push(...(JSON.parse(joinPieces(row)) as HistoryEvent[]));
    }
    record.history = history;
    this.summaries.set(record.instanceId, { executionId: record.executionId, rows: stored });
    const pending = rows
      .filter((r) => r.rowKey.startsWith('p:') && r.rowKey.slice(2) > record.consumedUpTo)
      .map((r) => ({ key: r.rowKey.slice(2), event: JSON.parse(joinPieces(r)) as HistoryEvent }));
    return { record, pending };
  }

  private loadEntity(id: string, summary: Row | undefined, rows: readonly Row[]): LoadedEntity {
    const record = summary === undefined ? newEntityRecord(id) : (JSON.parse(joinPieces(summary)) as EntityRecord);
    const pending = rows
      .filter((r) => r.rowKey.startsWith('p:') && r.rowKey.slice(2) > record.consumedUpTo)
      .map((r) => ({ key: r.rowKey.slice(2), message: JSON.parse(joinPieces(r)) as EntityMessage }));
    return { record, pending };
  }

  async saveOrchestration(checkpoint: OrchestrationCheckpoint): Promise<void> {
    await this.table();
    const rec = checkpoint.record;
    const pk = partition('o', rec.instanceId);
    const known = this.summaries.get(rec.instanceId);
    const firstRow = checkpoint.storedEvents === 0 || known === undefined || known.executionId !== rec.executionId ? 0 : known.rows;
    const appended = historyRows(rec.history.slice(checkpoint.storedEvents));
    const historyActions: TransactionAction[] = appended.map((json, i) => [
      'upsert',
      { partitionKey: pk, rowKey: historyRowKey(rec.executionId, firstRow + i), ...pieces(json) },
      'Replace',
    ]);
    const rows = firstRow + appended.length;
    const { history: _history, ...summaryRecord } = rec;
    const summaryJson = JSON.stringify({ ...summaryRecord, history: [] });
    checkRowSize(summaryJson, `The state of orchestration ${rec.instanceId}`);
    const summary: TransactionAction = ['upsert', { partitionKey: pk, rowKey: 's', rows, ...pieces(summaryJson) }, 'Replace'];
    await this.commit(pk, historyActions, summary, checkpoint.consumed);
    this.summaries.set(rec.instanceId, { executionId: rec.executionId, rows });
    if (known !== undefined && known.executionId !== rec.executionId) void this.dropHistory(pk, known);
  }

  /** Rows of an execution that ended (continueAsNew, replaced instance): unreferenced, so best effort. */
  private async dropHistory(pk: string, old: Summary): Promise<void> {
    const keys = Array.from({ length: old.rows }, (_, n) => historyRowKey(old.executionId, n));
    for (let i = 0; i < keys.length; i += maxBatchOps) {
      const batch = keys.slice(i, i + maxBatchOps).map((rowKey): TransactionAction => ['delete', { partitionKey: pk, rowKey }]);
      await this.client.submitTransaction(batch).catch(() => undefined);
    }
  }

  async saveEntity(checkpoint: EntityCheckpoint): Promise<void> {
    await this.table();
    const rec = checkpoint.record;
    const pk = partition('e', rec.id);
    const json = JSON.stringify(rec);
    checkRowSize(json, `The state of entity ${rec.id}`);
    await this.commit(pk, [], ['upsert', { partitionKey: pk, rowKey: 's', ...pieces(json) }, 'Replace'], checkpoint.consumed);
  }

  /** History first, then the summary with as many inbox deletions as fit; the rest after. */
  private async commit(
    pk: string,
    history: readonly TransactionAction[],
    summary: TransactionAction,
    consumed: readonly string[],
  ): Promise<void> {
    const deletes: TransactionAction[] = consumed.map((key) => ['delete', { partitionKey: pk, rowKey: `p:${key}` }]);
    const size = (a: TransactionAction): number =>
      Object.values(a[1]).reduce<number>((n, v) => n + (typeof v === 'string' ? v.length : 8), 0);
    const batches: TransactionAction[][] = [];
    let current: TransactionAction[] = [];
    let chars = 0;
    for (const action of [...history, summary]) {
      if (current.length > 0 && (current.length >= maxBatchOps || chars + size(action) > maxBatchChars)) {
        batches.push(current);
        current = [];
        chars = 0;
      }
      current.push(action);
      chars += size(action);
    }
    const room = maxBatchOps - current.length;
    current.push(...deletes.slice(0, room));
    batches.push(current);
    for (const batch of batches) await this.client.submitTransaction(batch);
    // Leftover deletions are housekeeping: the summary's consumedUpTo already hides those rows.
    for (let i = room; i < deletes.length; i += maxBatchOps) {
      await this.client.submitTransaction(deletes.slice(i, i + maxBatchOps)).catch(() => undefined);
    }
  }

  async enqueueOrchestrationEvent(instanceId: string, pending: PendingOrchestrationEvent): Promise<void> {
    await this.insertPending(partition('o', instanceId), pending.key, JSON.stringify(pending.event));
  }

  async enqueueEntityMessage(entityId: string, pending: PendingEntityMessage): Promise<void> {
    await this.insertPending(partition('e', entityId), pending.key, JSON.stringify(pending.message));
  }

  private async insertPending(pk: string, key: string, json: string): Promise<void> {
    await this.table();
    checkRowSize(json, 'A message');
    await this.client.createEntity({ partitionKey: pk, rowKey: `p:${key}`, ...pieces(json) });
  }

  async deleteOrchestration(instanceId: string): Promise<void> {
    await this.table();
    const pk = partition('o', instanceId);
    const keys: string[] = [];
    const filter = `PartitionKey eq '${pk.replace(/'/g, "''")}'`;
    for await (const row of this.client.listEntities({ queryOptions: { filter, select: ['RowKey'] } })) keys.push(row.rowKey as string);
    // Summary first: a partition without one does not load, so a half-deleted instance is just gone.
    keys.sort((a, b) => (a === 's' ? -1 : b === 's' ? 1 : 0));
    for (let i = 0; i < keys.length; i += maxBatchOps) {
      await this.client.submitTransaction(
        keys.slice(i, i + maxBatchOps).map((rowKey): TransactionAction => ['delete', { partitionKey: pk, rowKey }]),
      );
    }
    this.summaries.delete(instanceId);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
