/**
 * What the app knows of a declared processor's deliveries, in the job's `jobresults` partition:
 * `l|<message>|<delivery>` says that delivery `delivery` (the message's dequeue count when it was
 * leased) reached a worker — the worker used its lease id, to extend or to complete it — and, once
 * a completion was recorded, that completion's report.
 *
 * Why: a server cannot see that the caller of a long poll has gone (the Functions host gives the
 * handler no signal of it and ends no invocation when its client leaves), so a batch may be handed
 * to a request no one reads. A delivery no worker used is not an attempt (./../delivery/itemAttempts.ts);
 * a completion sent again after its answer was lost is answered with the first report.
 */
import { odata, type TableClient } from '@azure/data-tables';

import { hasStatus, translateStorageError } from '../../storage/errors';

/** A recorded completion's counts, as the complete route answered them (whether the job finished is read again). */
export interface LeaseReport {
  readonly recorded: number;
  readonly alreadyFinal: number;
  readonly retrying: number;
}

/** One delivery of one queue message. */
export interface Delivery {
  readonly jobId: string;
  readonly messageId: string;
  /** The message's dequeue count when it was leased (1 for the first). */
  readonly delivery: number;
}

const prefix = (messageId: string): string => `l|${messageId}|`;
// Zero-padded so the rows of a message list in delivery order.
const rowKey = (d: Delivery): string => `${prefix(d.messageId)}${String(d.delivery).padStart(6, '0')}`;

export class LeaseLog {
  constructor(
    private readonly table: () => Promise<TableClient>,
    private readonly now: () => number,
  ) {}

  /** The delivery reached a worker (a merge: a report written before stays). */
  async used(d: Delivery): Promise<void> {
    await this.write(d, {});
  }

  /** The delivery's completion was recorded with this report. */
  async completed(d: Delivery, report: LeaseReport): Promise<void> {
    await this.write(d, { report: JSON.stringify(report) });
  }

  /** The report of the delivery's recorded completion, if there was one. */
  async report(d: Delivery): Promise<LeaseReport | undefined> {
    const table = await this.table();
    try {
      const row = await table.getEntity<Record<string, unknown>>(d.jobId, rowKey(d));
      return typeof row.report === 'string' ? (JSON.parse(row.report) as LeaseReport) : undefined;
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading a lease of job ${d.jobId}`);
    }
  }

  /** How many of the message's deliveries before `delivery` reached a worker. */
  async usedBefore(d: Delivery): Promise<number> {
    const table = await this.table();
    const from = prefix(d.messageId);
    let used = 0;
    try {
      const rows = table.listEntities<Record<string, unknown>>({
        queryOptions: { filter: odata`PartitionKey eq ${d.jobId} and RowKey ge ${from} and RowKey lt ${rowKey(d)}`, select: ['RowKey'] },
      });
      for await (const _ of rows) used++;
    } catch (err) {
      throw translateStorageError(err, `reading the deliveries of job ${d.jobId}`);
    }
    return used;
  }

  /** Whether a worker used (extended or completed) a lease of the job at or after `since` (ms): one row at most is read. */
  async usedSince(jobId: string, since: number): Promise<boolean> {
    const table = await this.table();
    try {
      const rows = table.listEntities<Record<string, unknown>>({
        queryOptions: {
          filter: odata`PartitionKey eq ${jobId} and RowKey ge 'l|' and RowKey lt 'l}' and at ge ${since}`,
          select: ['RowKey'],
        },
      });
      for await (const _ of rows) return true;
    } catch (err) {
      throw translateStorageError(err, `reading the deliveries of job ${jobId}`);
    }
    return false;
  }

  private async write(d: Delivery, fields: Record<string, string>): Promise<void> {
    const table = await this.table();
    try {
      await table.upsertEntity({ partitionKey: d.jobId, rowKey: rowKey(d), at: this.now(), ...fields }, 'Merge');
    } catch (err) {
      throw translateStorageError(err, `recording a lease of job ${d.jobId}`);
    }
  }
}
