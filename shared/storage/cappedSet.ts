/**
 * A durable set of names with a cap, shared by every instance: one row per member plus a count row,
 * all in one table partition. Adding a member is one entity-group transaction (insert the member's
 * row, replace the count row with the ETag it was read with), so two instances adding at once can
 * neither both take the last place nor count one member twice; the loser re-reads and tries again.
 *
 * Members are remembered per process once seen, so asking about a known member costs nothing after
 * its first time in a process (one point read then). Most sets never remove a member: the cap bounds
 * how many distinct names callers can make the app hold state for. A set of things that end (open
 * jobs) releases a member when it ends, with the same one-transaction exactness.
 */
import { odata, type TableClient, type TransactionAction } from '@azure/data-tables';

import { AppError } from '../errors';
import { LostRace, retryLostRaces, type RetryContext } from '../retry';
import { hasStatus, translateStorageError } from './errors';
import { listPage, type Page, type PageRequest } from './list';

/** The partition of auto-created names in a capability's own table: no resource name starts with `|`. */
export const autoCreatedPartition = '|autocreated';

/** RowKey of the count row; member RowKeys are `m|<name>`, so no name can collide with it. */
const countRowKey = 'count';
const memberRowKey = (name: string): string => `m|${name}`;

export interface CappedSetOptions {
  readonly table: () => Promise<TableClient>;
  /** The partition holding this set (one table may hold several sets). */
  readonly partitionKey: string;
  readonly max: number;
  /** What the set holds, for messages: `stream types`. */
  readonly noun: string;
  /** The setting that holds `max`, named in the refusal. */
  readonly setting: string;
  readonly retry: RetryContext;
  /** The refusal when full (default: 409, as waiting frees no place); a set whose members end may answer 429. */
  readonly whenFull?: () => AppError;
}

interface CountRow {
  readonly count: number;
  readonly etag: string | undefined;
}

export class CappedSet {
  private readonly known = new Set<string>();

  constructor(private readonly options: CappedSetOptions) {}

  /**
   * Resolves once `name` is a member: at once when it already is, else by adding it. Refuses with
   * 409 `Conflict` (nothing written) when the set is full: waiting does not free a place, an
   * operator raising the setting does, so this is not a 429.
   */
  async admit(name: string): Promise<void> {
    if (this.known.has(name)) return;
    const table = await this.options.table();
    await retryLostRaces(this.options.retry, async () => {
      if (await this.isMember(table, name)) return;
      const count = await this.readCount(table);
      if (count.count >= this.options.max) {
        // Another instance may have added this very name between the two reads (the count grows
        // with the member row, in one transaction): asking again after the count was read is what
        // tells "full" from "just joined". Counts only grow, so a name still absent is refused.
        if (await this.isMember(table, name)) return;
        throw this.full();
      }
      await this.add(table, name, count);
    });
    this.remember(name);
  }

  /**
   * Removes `name` if it is a member: its row and the count go down together in one transaction,
   * so a release racing an admit can neither free a place twice nor lose one.
   */
  async release(name: string): Promise<boolean> {
    this.known.delete(name);
    const table = await this.options.table();
    return retryLostRaces(this.options.retry, async () => {
      if (!(await this.isMember(table, name))) return false;
      const count = await this.readCount(table);
      if (count.etag === undefined || count.count < 1)
        throw new AppError('CorruptState', `The count of ${this.options.noun} is behind its members`);
      const partitionKey = this.options.partitionKey;
      const actions: TransactionAction[] = [
        ['delete', { partitionKey, rowKey: memberRowKey(name) }],
        ['update', { partitionKey, rowKey: countRowKey, n: count.count - 1 }, 'Replace', { etag: count.etag }],
      ];
      try {
        await table.submitTransaction(actions);
      } catch (err) {
        // 404: the member went meanwhile (another release); 412: the count moved. Re-read.
        if (hasStatus(err, 404) || hasStatus(err, 412) || hasStatus(err, 409)) throw new LostRace(`${this.options.noun} changed`);
        throw translateStorageError(err, `removing from ${this.options.noun}`);
      }
      return true;
    });
  }

  /** A page of the members in name order (for operators); `list` names the list a token serves. */
  async list(page: PageRequest, list: string): Promise<Page<string>> {
    const { partitionKey, noun } = this.options;
    // Member keys are `m|<name>`; `}` follows `|`, so the range holds the members and nothing else.
    const filter = odata`PartitionKey eq ${partitionKey} and RowKey gt ${'m|'} and RowKey lt ${'m}'}`;
    return listPage(await this.options.table(), { filter, list, doing: `listing ${noun}`, strict: true }, page, (row) =>
      (row.rowKey ?? '').slice(2),
    );
  }

  /** Members counted so far (for tests and operators). */
  async size(): Promise<number> {
    return (await this.readCount(await this.options.table())).count;
  }

  private full(): AppError {
    if (this.options.whenFull !== undefined) return this.options.whenFull();
    const { noun, setting, max } = this.options;
    return new AppError('Conflict', `The app already holds ${max} ${noun} (${setting}); a new one is refused until an operator raises it`, {
      extra: { limit: setting, max },
    });
  }

  /** Bounded by the cap itself: only admitted names get here (a lowered cap leaves at most the old one). */
  private remember(name: string): void {
    if (this.known.size >= Math.max(this.options.max, 1)) this.known.clear();
    this.known.add(name);
  }

  private async isMember(table: TableClient, name: string): Promise<boolean> {
    try {
      await table.getEntity(this.options.partitionKey, memberRowKey(name), { queryOptions: { select: ['PartitionKey'] } });
      return true;
    } catch (err) {
      if (hasStatus(err, 404)) return false;
      throw translateStorageError(err, `reading ${this.options.noun}`);
    }
  }

  private async readCount(table: TableClient): Promise<CountRow> {
    try {
      const row = await table.getEntity<{ n?: unknown }>(this.options.partitionKey, countRowKey);
      if (typeof row.n !== 'number' || !Number.isSafeInteger(row.n) || row.n < 0) {
        throw new AppError('CorruptState', `The count of ${this.options.noun} is not a count`);
      }
      return { count: row.n, etag: row.etag };
    } catch (err) {
      if (hasStatus(err, 404)) return { count: 0, etag: undefined };
      if (err instanceof AppError) throw err;
      throw translateStorageError(err, `counting ${this.options.noun}`);
    }
  }

  private async add(table: TableClient, name: string, count: CountRow): Promise<void> {
    const partitionKey = this.options.partitionKey;
    const next = { partitionKey, rowKey: countRowKey, n: count.count + 1 };
    const actions: TransactionAction[] = [
      ['create', { partitionKey, rowKey: memberRowKey(name) }],
      count.etag === undefined ? ['create', next] : ['update', next, 'Replace', { etag: count.etag }],
    ];
    try {
      await table.submitTransaction(actions);
    } catch (err) {
      // 409: the member or the count row was created meanwhile; 412/404: the count moved. Re-read.
      if (hasStatus(err, 409) || hasStatus(err, 412) || hasStatus(err, 404)) throw new LostRace(`${this.options.noun} changed`);
      throw translateStorageError(err, `adding to ${this.options.noun}`);
    }
  }
}
