/**
 * A durable set of names with a cap, shared by every instance: one row per member plus a count row,
 * all in one table partition. Adding a member is one entity-group transaction (insert the member's
 * row, replace the count row with the ETag it was read with), so two instances adding at once can
 * neither both take the last place nor count one member twice; the loser re-reads and tries again.
 *
 * A holder's count row at 0 is deleted (`countAction` below): a set of holders that come and go
 * keeps rows only for those holding something.
 *
 * Members are remembered per process once seen, so asking about a known member costs nothing after
 * its first time in a process (one point read then). Most sets never remove a member: the cap bounds
 * how many distinct names callers can make the app hold state for. A set of things that end (open
 * jobs) releases a member when it ends, with the same one-transaction exactness.
 *
 * A set with a `share` is a pool of fair shares (shared/shares.ts): each member names its
 * holder (a Caller id), a count row per holder sits in the same partition, and the holder's count is
 * checked and moved in the same transaction as the total, so no holder passes its share however many
 * instances admit at once; one holder at its share is refused alone.
 *
 * Changes of one set in one process are group-committed (shared/groupCommit.ts): while a transaction
 * is under way the next admissions and releases queue, and go together in the next one. So a burst
 * on one instance is one writer of the count row, not as many as there are requests racing each
 * other's ETags — which is how 60 concurrent submissions ran out of optimistic-concurrency attempts
 * and answered 503 instead of 202 or 429. Contention is left only between instances.
 */
import { odata, type TableClient, type TransactionAction } from '@azure/data-tables';

import { AppError } from '../errors';
import { GroupCommit } from '../groupCommit';
import { limitsOf, type ShareLimits, verdict } from '../shares';
import { LostRace, retryLostRaces, type RetryContext } from '../retry';
import { hasStatus, translateStorageError } from './errors';
import { listPage, type Page, type PageRequest } from './list';

/** The partition of auto-created names in a capability's own table: no resource name starts with `|`. */
export const autoCreatedPartition = '|autocreated';

/** RowKey of the count row; member RowKeys are `m|<name>`, so no name can collide with it. */
const countRowKey = 'count';
const memberRowKey = (name: string): string => `m|${name}`;
/** RowKey of a holder's count: `h|` and the Caller id, escaped (a RowKey allows no `/`, `\\`, `#` or `?`). */
const holderRowKey = (holder: string): string => `h|${encodeURIComponent(holder)}`;
/** Items one transaction carries: a member row each, the count, and a holder row each (at most 100 operations). */
const maxBatch = 32;

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
  /** The most one holder may hold (a pool of fair shares); none: holders are not counted. */
  readonly share?: number;
  /** The refusal of a holder at its share (default: a 429 naming the setting). */
  readonly whenOverShare?: () => AppError;
  /**
   * Whether a member admitted in this process is taken for a member from then on (default: yes).
   * Only a set whose members never go may: a member released on another instance stays in this
   * one's memory, and a second admission of the same name would take no place.
   */
  readonly remembers?: boolean;
}

type Change =
  { readonly op: 'admit'; readonly name: string; readonly holder: string | undefined } | { readonly op: 'release'; readonly name: string };

/** What a batch did to each name: admitted (or already a member), refused, released, or absent. */
type Outcome = 'member' | 'full' | 'overShare' | 'released' | 'absent';

/** A member as read: absent, or present with the holder it was admitted for. */
type Member = { readonly present: false } | { readonly present: true; readonly holder: string | undefined };

interface CountRow {
  readonly count: number;
  readonly etag: string | undefined;
}

export class CappedSet {
  private readonly known = new Set<string>();
  private readonly commits = new GroupCommit<Change, Map<string, Outcome>>((_key, changes) => this.commit(changes), {
    maxInFlight: 1,
    maxItems: maxBatch,
  });

  constructor(private readonly options: CappedSetOptions) {}

  /**
   * Resolves once `name` is a member: at once when it already is, else by adding it for `holder`.
   * Refuses with 409 `Conflict` (nothing written) when the set is full: waiting does not free a
   * place, an operator raising the setting does, so this is not a 429. A set with a share refuses a
   * holder at its share (429), whatever room the others leave.
   */
  async admit(name: string, holder?: string): Promise<void> {
    if (this.known.has(name)) return;
    const outcome = (await this.commits.submit('', { op: 'admit', name, holder })).get(name);
    if (outcome === 'full') throw this.full();
    if (outcome === 'overShare') throw this.overShare();
    this.remember(name);
  }

  /**
   * Removes `name` if it is a member: its row, the count and its holder's count go down together in
   * one transaction, so a release racing an admit can neither free a place twice nor lose one.
   */
  async release(name: string): Promise<boolean> {
    this.known.delete(name);
    return (await this.commits.submit('', { op: 'release', name })).get(name) === 'released';
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

  /** Members `holder` holds (a pool of fair shares): one point read. */
  async heldBy(holder: string): Promise<number> {
    return (await this.readCount(await this.options.table(), holderRowKey(holder))).count;
  }

  private full(): AppError {
    if (this.options.whenFull !== undefined) return this.options.whenFull();
    const { noun, setting, max } = this.options;
    return new AppError('Conflict', `The app already holds ${max} ${noun} (${setting}); a new one is refused until an operator raises it`, {
      extra: { limit: setting, max },
    });
  }

  private overShare(): AppError {
    if (this.options.whenOverShare !== undefined) return this.options.whenOverShare();
    const { noun, setting, share } = this.options;
    return new AppError('TooManyRequests', `You already hold your share (${share ?? 0}) of the ${noun} (${setting}); others keep theirs`, {
      retryAfterSeconds: 30,
      extra: { limit: setting, share },
    });
  }

  private limits(): ShareLimits {
    return limitsOf(this.options.max, this.options.share ?? this.options.max);
  }

  /**
   * One transaction for a batch of changes, decided on the rows as read (in order: a release frees
   * its place for a later admission) and written with the count's and the holders' ETags; a lost
   * race reads and decides again. Only the net change is written.
   */
  private commit(changes: readonly Change[]): Promise<Map<string, Outcome>> {
    const table = this.options.table();
    return retryLostRaces(this.options.retry, async () => {
      const t = await table;
      const names = [...new Set(changes.map((c) => c.name))];
      const before = new Map(await Promise.all(names.map(async (n) => [n, await this.readMember(t, n)] as const)));
      const count = await this.readCount(t);
      const holders = this.holdersOf(changes, before);
      const held = new Map(await Promise.all(holders.map(async (h) => [h, await this.readCount(t, holderRowKey(h))] as const)));
      const after = new Map(before);
      const outcomes = new Map<string, Outcome>();
      const heldNow = new Map([...held].map(([h, c]) => [h, c.count]));
      let total = count.count;
      for (const change of changes) {
        const member = after.get(change.name) as Member;
        if (change.op === 'release') {
          if (!member.present) outcomes.set(change.name, outcomes.get(change.name) === 'released' ? 'released' : 'absent');
          else {
            after.set(change.name, { present: false });
            total--;
            if (member.holder !== undefined && heldNow.has(member.holder))
              heldNow.set(member.holder, (heldNow.get(member.holder) ?? 1) - 1);
            outcomes.set(change.name, 'released');
          }
          continue;
        }
        if (member.present) {
          outcomes.set(change.name, 'member');
          continue;
        }
        const holder = this.options.share === undefined ? undefined : change.holder;
        const why = verdict(this.limits(), total, holder === undefined ? 0 : (heldNow.get(holder) ?? 0));
        if (why !== 'admit') {
          outcomes.set(change.name, why);
          continue;
        }
        after.set(change.name, { present: true, holder });
        total++;
        if (holder !== undefined) heldNow.set(holder, (heldNow.get(holder) ?? 0) + 1);
        outcomes.set(change.name, 'member');
      }
      const actions = this.actionsFor(before, after, { total, count }, heldNow, held);
      if (actions.length > 0) await this.submit(t, actions);
      // A refusal was decided on rows as read: a name refused for room may have been added meanwhile
      // by another instance (the count grows with the member row), so asking again tells "full" from
      // "just joined". Counts only grow with members, so a name still absent is refused.
      for (const [name, outcome] of outcomes) {
        if ((outcome === 'full' || outcome === 'overShare') && (await this.readMember(t, name)).present) outcomes.set(name, 'member');
      }
      return outcomes;
    });
  }

  /** The holders whose counts a batch reads: those admitting (in a set with shares) and those of members released. */
  private holdersOf(changes: readonly Change[], before: ReadonlyMap<string, Member>): string[] {
    const holders = new Set<string>();
    for (const change of changes) {
      if (change.op === 'admit' && this.options.share !== undefined && change.holder !== undefined) holders.add(change.holder);
      const member = before.get(change.name);
      if (change.op === 'release' && member?.present === true && member.holder !== undefined) holders.add(member.holder);
    }
    return [...holders];
  }

  /** The transaction's operations: member rows created or deleted, the count, and holder counts that moved. */
  private actionsFor(
    before: ReadonlyMap<string, Member>,
    after: ReadonlyMap<string, Member>,
    totals: { readonly total: number; readonly count: CountRow },
    heldNow: ReadonlyMap<string, number>,
    held: ReadonlyMap<string, CountRow>,
  ): TransactionAction[] {
    const partitionKey = this.options.partitionKey;
    const actions: TransactionAction[] = [];
    for (const [name, now] of after) {
      const was = before.get(name) as Member;
      if (was.present === now.present) continue;
      if (now.present)
        actions.push(['create', { partitionKey, rowKey: memberRowKey(name), ...(now.holder === undefined ? {} : { h: now.holder }) }]);
      else actions.push(['delete', { partitionKey, rowKey: memberRowKey(name) }]);
    }
    if (actions.length === 0) return actions;
    actions.push(countAction(partitionKey, countRowKey, totals.total, totals.count));
    for (const [holder, n] of heldNow) {
      const row = held.get(holder) as CountRow;
      if (n !== row.count) actions.push(countAction(partitionKey, holderRowKey(holder), n, row, true));
    }
    return actions;
  }

  private async submit(table: TableClient, actions: TransactionAction[]): Promise<void> {
    try {
      await table.submitTransaction(actions);
    } catch (err) {
      // 409: a member or count row was created meanwhile; 412/404: a count or member moved. Re-read.
      if (hasStatus(err, 409) || hasStatus(err, 412) || hasStatus(err, 404)) throw new LostRace(`${this.options.noun} changed`);
      throw translateStorageError(err, `changing ${this.options.noun}`);
    }
  }

  /** Bounded by the cap itself: only admitted names get here (a lowered cap leaves at most the old one). */
  private remember(name: string): void {
    if (this.options.remembers === false) return;
    if (this.known.size >= Math.max(this.options.max, 1)) this.known.clear();
    this.known.add(name);
  }

  private async readMember(table: TableClient, name: string): Promise<Member> {
    try {
      const row = await table.getEntity<{ h?: unknown }>(this.options.partitionKey, memberRowKey(name));
      return { present: true, holder: typeof row.h === 'string' ? row.h : undefined };
    } catch (err) {
      if (hasStatus(err, 404)) return { present: false };
      throw translateStorageError(err, `reading ${this.options.noun}`);
    }
  }

  private async readCount(table: TableClient, rowKey = countRowKey): Promise<CountRow> {
    try {
      const row = await table.getEntity<{ n?: unknown }>(this.options.partitionKey, rowKey);
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
}

/**
 * A count row's write: created when it was absent, else replaced under the ETag it was read with.
 * A holder's row (`deleteAtZero`) is deleted once it reaches 0 (an absent row reads as 0), so
 * holders that come and go leave no rows behind. A delete in a transaction carries no ETag (the SDK
 * sends `If-Match: *`), so what makes it race-free is the total's row, which stays and which every
 * transaction replaces under its ETag: a holder's row only ever changes together with the total's.
 */
function countAction(partitionKey: string, rowKey: string, n: number, was: CountRow, deleteAtZero = false): TransactionAction {
  if (n < 0) throw new AppError('CorruptState', `A count in ${partitionKey} went below zero`);
  const entity = { partitionKey, rowKey, n };
  if (was.etag === undefined) return ['create', entity];
  if (n === 0 && deleteAtZero) return ['delete', { partitionKey, rowKey }];
  return ['update', entity, 'Replace', { etag: was.etag }];
}
