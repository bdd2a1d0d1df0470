/**
 * Which message carries a batch of a declared processor's items, in the job's `jobresults`
 * partition: `c|<batch>` (../delivery/carrierIds.ts names batches; ../delivery/carriage.ts says why
 * and how the rows are used). A row is one of, or grows through:
 *
 * - awaiting (`k`): a lane message sent with this key may bind it (written before the message is sent);
 * - bound (`m`): the message with this id carries the batch, and only it is leased;
 * - with a rest (`r`): the move that bound it sent the batch's items from item `from` on to the
 *   processor's queue, as batch `id` — a copy of the moved message sends them again;
 * - handed over (`h`): its carrier gave its items to other batches (a lease that took fewer, a batch
 *   put back) and is retired — its message, delivered again, hands them over again.
 */
import type { TableClient, TransactionAction } from '@azure/data-tables';

import { hasStatus, translateStorageError } from '../../storage/errors';

export interface BatchPart {
  readonly id: string;
  /** The carrier key its lane message is sent with. */
  readonly key: string;
}

export interface Handover {
  /** The items before `from`, if they go on (a lease's part: put into the lane, held). */
  readonly kept?: BatchPart;
  /** The items from `from` on. */
  readonly rest: BatchPart;
  readonly from: string;
}

export interface CarrierRow {
  readonly etag: string;
  readonly messageId?: string;
  readonly key?: string;
  readonly rest?: { readonly id: string; readonly from: string };
  readonly handover?: Handover;
}

const rowKey = (batch: string): string => `c|${batch}`;

type Stored = Record<string, unknown>;

function rowOf(entity: Stored, etag: string): CarrierRow {
  const text = (name: string): string | undefined => (typeof entity[name] === 'string' ? entity[name] : undefined);
  const json = <T>(name: string): T | undefined => {
    const value = text(name);
    return value === undefined ? undefined : (JSON.parse(value) as T);
  };
  const [messageId, key] = [text('m'), text('k')];
  const [rest, handover] = [json<CarrierRow['rest']>('r'), json<Handover>('h')];
  return {
    etag,
    ...(messageId === undefined ? {} : { messageId }),
    ...(key === undefined ? {} : { key }),
    ...(rest === undefined ? {} : { rest }),
    ...(handover === undefined ? {} : { handover }),
  };
}

export class CarrierRows {
  constructor(private readonly table: () => Promise<TableClient>) {}

  async read(jobId: string, batch: string): Promise<CarrierRow | undefined> {
    const table = await this.table();
    try {
      const entity = await table.getEntity<Stored>(jobId, rowKey(batch));
      return rowOf(entity, entity.etag);
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading the carrier of a batch of job ${jobId}`);
    }
  }

  /**
   * Binds the batch to `messageId` (with the rest its move sent on) unless a row is there: the row
   * as it is after, this binding or the one found.
   */
  async bind(jobId: string, batch: string, messageId: string, rest?: CarrierRow['rest']): Promise<CarrierRow> {
    const table = await this.table();
    const entity = { partitionKey: jobId, rowKey: rowKey(batch), m: messageId, ...(rest === undefined ? {} : { r: JSON.stringify(rest) }) };
    try {
      const created = await table.createEntity(entity);
      return { etag: created.etag ?? '', messageId, ...(rest === undefined ? {} : { rest }) };
    } catch (err) {
      if (!hasStatus(err, 409)) throw translateStorageError(err, `binding a batch of job ${jobId}`);
    }
    const found = await this.read(jobId, batch);
    if (found === undefined) throw translateStorageError(new Error('the carrier row vanished'), `binding a batch of job ${jobId}`);
    return found;
  }

  /** Binds an awaiting row (as read, with its etag) to `messageId`: the row after, or undefined when it changed meanwhile. */
  async bindAwaiting(jobId: string, batch: string, row: CarrierRow, messageId: string): Promise<CarrierRow | undefined> {
    const table = await this.table();
    try {
      const entity = { partitionKey: jobId, rowKey: rowKey(batch), m: messageId, ...(row.key === undefined ? {} : { k: row.key }) };
      const updated = await table.updateEntity(entity, 'Replace', { etag: row.etag });
      return { etag: updated.etag ?? '', messageId, ...(row.key === undefined ? {} : { key: row.key }) };
    } catch (err) {
      if (hasStatus(err, 412) || hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `binding a batch of job ${jobId}`);
    }
  }

  /**
   * The carrier (its row as read, with its etag) hands its items over: in one transaction its row
   * says where they went and the parts' rows await their messages. False when the row changed meanwhile.
   */
  async handOver(jobId: string, batch: string, row: CarrierRow, handover: Handover): Promise<boolean> {
    const table = await this.table();
    const awaiting = (part: BatchPart): TransactionAction => ['create', { partitionKey: jobId, rowKey: rowKey(part.id), k: part.key }];
    try {
      await table.submitTransaction([
        ['update', { partitionKey: jobId, rowKey: rowKey(batch), h: JSON.stringify(handover) }, 'Merge', { etag: row.etag }],
        ...(handover.kept === undefined ? [] : [awaiting(handover.kept)]),
        awaiting(handover.rest),
      ]);
      return true;
    } catch (err) {
      if (hasStatus(err, 412) || hasStatus(err, 409) || hasStatus(err, 404)) return false;
      throw translateStorageError(err, `handing over a batch of job ${jobId}`);
    }
  }
}
