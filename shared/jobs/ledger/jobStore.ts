/**
 * The `jobs` table: job rows and the `open` index (one row per job that still has work a crash
 * could strand: enqueue, finalization or its event). Every method is one storage round trip
 * (a query: one per page). A lost conditional write surfaces as `LostRace`.
 *
 * A tombstone may stand where a job row would be: the reconciler's mark that it gave back the place
 * of a submission that had not written its job row in time (jobRows.ts `dropDebris`). It holds the
 * job's key, so a submitter still on its way cannot create the job row over it unnoticed. Reads and
 * lists skip it: to every reader it is a job that does not exist.
 */
import { odata, type TableClient } from '@azure/data-tables';

import { LostRace } from '../../retry';
import { hasStatus, translateStorageError } from '../../storage/errors';
import { listPage, type Page, type PageRequest } from '../../storage/list';
import { jobEntity, type JobRecord, jobRowKey, parseJob, type StoredJob } from './jobRecord';

const openPartition = 'open';
/** A tombstone's phase: `burying` while the reconciler gives the place back, `buried` once it has. */
export type Tombstone = 'burying' | 'buried';
const tombstones: readonly string[] = ['burying', 'buried'] satisfies Tombstone[];
const isTombstone = (raw: Record<string, unknown>): boolean => tombstones.includes(String(raw.phase));
/** Finished jobs by completion time (RowKey `<ms, 15 digits>|<job>`): what the retention purge visits, oldest first. */
const finishedPartition = 'finished';
/** Where the reconciler's page of the `open` index goes on from (job ids are the app's, so no job is named `reconcile`). */
const cursorPartition = 'reconcile';
const cursorRowKey = 'cursor';

function finishedRowKey(id: string, at: number): string {
  return `${String(Math.max(0, Math.floor(at))).padStart(15, '0')}|${id}`;
}

export class JobStore {
  constructor(private readonly table: () => Promise<TableClient>) {}

  async read(id: string): Promise<StoredJob | undefined> {
    const table = await this.table();
    try {
      const raw = await table.getEntity<Record<string, unknown>>(id, jobRowKey);
      return isTombstone(raw) ? undefined : { job: parseJob(id, raw), etag: raw.etag };
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading job ${id}`);
    }
  }

  /** Inserts the job; undefined when a job with this id exists already. */
  async create(job: JobRecord): Promise<StoredJob | undefined> {
    const table = await this.table();
    try {
      const response = await table.createEntity(jobEntity(job));
      return { job, etag: response.etag ?? '' };
    } catch (err) {
      if (hasStatus(err, 409)) return undefined;
      throw translateStorageError(err, `creating job ${job.id}`);
    }
  }

  /** The tombstone where the job row would be, with its ETag; undefined when there is none (or a job). */
  async tombstone(id: string): Promise<{ phase: Tombstone; etag: string } | undefined> {
    const table = await this.table();
    try {
      const raw = await table.getEntity<Record<string, unknown>>(id, jobRowKey, { queryOptions: { select: ['phase'] } });
      return isTombstone(raw) ? { phase: raw.phase as Tombstone, etag: raw.etag } : undefined;
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading job ${id}`);
    }
  }

  /** Writes a `burying` tombstone where the job row would be; false when a row (a job, or a tombstone) is there. */
  async bury(id: string, at: number): Promise<boolean> {
    const table = await this.table();
    try {
      await table.createEntity({ partitionKey: id, rowKey: jobRowKey, phase: 'burying' satisfies Tombstone, at });
      return true;
    } catch (err) {
      if (hasStatus(err, 409)) return false;
      throw translateStorageError(err, `writing a tombstone for job ${id}`);
    }
  }

  /** The tombstone's place has gone back: a submitter may now remove it and start again. */
  async markBuried(id: string, at: number): Promise<void> {
    const table = await this.table();
    try {
      await table.updateEntity({ partitionKey: id, rowKey: jobRowKey, phase: 'buried' satisfies Tombstone, at }, 'Replace', { etag: '*' });
    } catch (err) {
      throw translateStorageError(err, `writing a tombstone for job ${id}`);
    }
  }

  /** Removes the tombstone read at `etag`; LostRace when it changed or went meanwhile. */
  async unbury(id: string, etag: string): Promise<void> {
    const table = await this.table();
    try {
      await table.deleteEntity(id, jobRowKey, { etag });
    } catch (err) {
      if (hasStatus(err, 412) || hasStatus(err, 404)) throw new LostRace(`job ${id} changed`);
      throw translateStorageError(err, `removing the tombstone of job ${id}`);
    }
  }

  /** Replaces the job if it is still at `etag`; throws LostRace otherwise. */
  async update(next: JobRecord, etag: string): Promise<StoredJob> {
    const table = await this.table();
    try {
      const response = await table.updateEntity(jobEntity(next), 'Replace', { etag });
      return { job: next, etag: response.etag ?? '' };
    } catch (err) {
      if (hasStatus(err, 412) || hasStatus(err, 404)) throw new LostRace(`job ${next.id} changed`);
      throw translateStorageError(err, `updating job ${next.id}`);
    }
  }

  async markOpen(id: string, at: number): Promise<void> {
    const table = await this.table();
    try {
      await table.upsertEntity({ partitionKey: openPartition, rowKey: id, since: at }, 'Replace');
    } catch (err) {
      throw translateStorageError(err, `indexing job ${id} as open`);
    }
  }

  /** Removes the job's `open` entry (only as read at `etag`, when given: a newer one stays). */
  async clearOpen(id: string, etag?: string): Promise<void> {
    const table = await this.table();
    try {
      await table.deleteEntity(openPartition, id, etag === undefined ? {} : { etag });
    } catch (err) {
      if (!hasStatus(err, 404) && !hasStatus(err, 412)) throw translateStorageError(err, `removing job ${id} from the open index`);
    }
  }

  async markFinished(id: string, at: number): Promise<void> {
    const table = await this.table();
    try {
      await table.upsertEntity({ partitionKey: finishedPartition, rowKey: finishedRowKey(id, at) }, 'Replace');
    } catch (err) {
      throw translateStorageError(err, `indexing job ${id} as finished`);
    }
  }

  /** Up to `limit` finished-index entries older than `before` (ms), oldest first. */
  async finishedBefore(before: number, limit: number): Promise<{ id: string; rowKey: string }[]> {
    const table = await this.table();
    const out: { id: string; rowKey: string }[] = [];
    try {
      const rows = table.listEntities<Record<string, unknown>>({
        queryOptions: {
          filter: odata`PartitionKey eq ${finishedPartition} and RowKey lt ${finishedRowKey('', before)}`,
          select: ['RowKey'],
        },
      });
      for await (const row of rows) {
        const rowKey = String(row.rowKey);
        out.push({ id: rowKey.slice(rowKey.indexOf('|') + 1), rowKey });
        if (out.length >= limit) break;
      }
    } catch (err) {
      throw translateStorageError(err, 'listing finished jobs');
    }
    return out;
  }

  async unmarkFinished(rowKey: string): Promise<void> {
    const table = await this.table();
    try {
      await table.deleteEntity(finishedPartition, rowKey);
    } catch (err) {
      if (!hasStatus(err, 404)) throw translateStorageError(err, 'removing a finished-index entry');
    }
  }

  /** Deletes the job row (the purge, after its results and files). */
  async remove(id: string): Promise<void> {
    const table = await this.table();
    try {
      await table.deleteEntity(id, jobRowKey);
    } catch (err) {
      if (!hasStatus(err, 404)) throw translateStorageError(err, `deleting job ${id}`);
    }
  }

  /**
   * A page of jobs in id order (for operators): the table's own order, so a page costs what it
   * holds — time-ordered ids oldest first, then the jobs named after an Idempotency-Key.
   */
  async list(page: PageRequest, owner?: string): Promise<Page<JobRecord>> {
    const query =
      owner === undefined
        ? { filter: odata`RowKey eq ${jobRowKey} and phase ne ${'burying'} and phase ne ${'buried'}`, list: 'jobs', doing: 'listing jobs' }
        : { filter: odata`RowKey eq ${jobRowKey} and owner eq ${owner}`, list: `jobs?owner=${owner}`, doing: 'listing jobs' };
    return listPage(await this.table(), query, page, (row) => parseJob(row.partitionKey ?? '', row));
  }

  /** Open jobs (in id order) after `after` (none: from the first), and since when each is indexed. */
  async listOpen(limit: number, after = ''): Promise<{ id: string; since: number; etag: string }[]> {
    const table = await this.table();
    const open: { id: string; since: number; etag: string }[] = [];
    try {
      const rows = table.listEntities<Record<string, unknown>>({
        queryOptions: { filter: odata`PartitionKey eq ${openPartition} and RowKey gt ${after}`, select: ['RowKey', 'since'] },
      });
      for await (const row of rows) {
        if (typeof row.rowKey === 'string') open.push({ id: row.rowKey, since: Number(row.since ?? 0), etag: String(row.etag) });
        if (open.length >= limit) break;
      }
    } catch (err) {
      throw translateStorageError(err, 'listing open jobs');
    }
    return open;
  }

  /** The id the reconciler's next page of open jobs starts after ('' for the first page). */
  async reconcileCursor(): Promise<string> {
    const table = await this.table();
    try {
      const row = await table.getEntity<{ after?: unknown }>(cursorPartition, cursorRowKey);
      return typeof row.after === 'string' ? row.after : '';
    } catch (err) {
      if (hasStatus(err, 404)) return '';
      throw translateStorageError(err, 'reading the reconcile cursor');
    }
  }

  async setReconcileCursor(after: string): Promise<void> {
    const table = await this.table();
    try {
      await table.upsertEntity({ partitionKey: cursorPartition, rowKey: cursorRowKey, after }, 'Replace');
    } catch (err) {
      throw translateStorageError(err, 'writing the reconcile cursor');
    }
  }
}
