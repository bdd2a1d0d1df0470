/**
 * The schedule index: one table row per schedule (PartitionKey = id) with its definition, control
 * state, next fire time, recent runs and, in Service Bus scheduled mode, the sequence number of the
 * scheduled message. It is the truth for control requests (pause, resume, cancel, trigger): HTTP
 * writes them, the orchestration reads them. Every change is a conditional write with the row's
 * ETag, so a cancel and a fire racing on one row end with exactly one winner.
 */
import { odata, type TableClient, type TableEntityResult } from '@azure/data-tables';
import * as z from 'zod';

import { AppError } from '../errors';
import { zodIssues } from '../http/route';
import { LostRace } from '../retry';
import { hasStatus, translateStorageError } from '../storage/errors';
import { listPage, type Page, type PageRequest } from '../storage/list';
import { traceparentSchema } from '../telemetry/traceContext';
import { type Creator, creatorSchema } from './creator';
import type { ScheduleDefinition } from './definition';
import type { RunRecord, ScheduleStatus, SettledRun, TriggerRequest } from './records';

const rowKey = 'schedule';

type ScheduleMode = 'orchestration' | 'serviceBusScheduled';

export interface ScheduleRow {
  readonly id: string;
  readonly definition: ScheduleDefinition;
  /** `definitionKey()` of the definition, for the idempotent-create comparison. */
  readonly definitionKey: string;
  readonly mode: ScheduleMode;
  readonly state: ScheduleStatus;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly nextFireAt: string | undefined;
  /** Newest last. */
  readonly runs: readonly RunRecord[];
  /** Runs ever claimed (started). */
  readonly runCount: number;
  /** Of those, runs of scheduled (or caught-up) fires: a one-off with one has fired. Triggers do not count. */
  readonly firedCount: number;
  /** Trigger-now requests not yet turned into runs. */
  readonly triggers: readonly TriggerRequest[];
  /** The newest settled runs (a ring), for an orchestration that stopped waiting on them. */
  readonly settled: readonly SettledRun[];
  /** Bumped by every control request; the orchestration acknowledges what it has read. */
  readonly controlVersion: number;
  readonly ackVersion: number;
  /** Service Bus scheduled mode: the cancel handle (a 64-bit number, kept as a decimal string). */
  readonly sequenceNumber: string | undefined;
  /** Undefined on rows written before creators were recorded. */
  readonly createdBy: Creator | undefined;
  readonly etag: string;
}

export type NewScheduleRow = Omit<ScheduleRow, 'etag'>;

const jsonText = z.string().transform((text, ctx) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'Not JSON' });
    return z.NEVER;
  }
});

const count = z.union([z.number().int().min(0), z.bigint().min(0n)]).transform((v) => Number(v));

const storedRow = z.object({
  partitionKey: z.string(),
  etag: z.string(),
  definition: jsonText.pipe(
    z.object({ timing: z.object({ kind: z.enum(['once', 'cron']) }).loose(), target: z.object({ type: z.string() }).loose() }).loose(),
  ),
  definitionKey: z.string(),
  mode: z.enum(['orchestration', 'serviceBusScheduled']),
  state: z.enum(['pending', 'active', 'paused', 'cancelled', 'completed']),
  createdAt: z.string(),
  updatedAt: z.string(),
  nextFireAt: z.string().default(''),
  runs: jsonText.pipe(z.array(z.object({ at: z.string(), outcome: z.string() }).loose())),
  runCount: count,
  firedCount: count.default(0),
  triggers: jsonText.pipe(
    z.array(z.object({ id: z.string(), requestedAt: z.string(), traceparent: traceparentSchema.optional().catch(undefined) })),
  ),
  settled: z
    .string()
    .default('[]')
    .pipe(jsonText)
    .pipe(
      z.array(
        z.object({ runId: z.string(), outcome: z.enum(['succeeded', 'failed', 'refused', 'started']), handle: z.string().optional() }),
      ),
    ),
  controlVersion: count,
  ackVersion: count,
  sequenceNumber: z.string().default(''),
  createdBy: z
    .string()
    .default('')
    .pipe(z.union([z.literal('').transform(() => undefined), jsonText.pipe(creatorSchema)])),
});

function corrupt(id: string, issues: { path: string; message: string }[]): AppError {
  return new AppError('CorruptState', `Stored state of schedule "${id}" is corrupt. It was left unchanged.`, {
    issues,
    extra: { schedule: id },
  });
}

export function parseRow(raw: unknown): ScheduleRow {
  const parsed = storedRow.safeParse(raw);
  const id = typeof raw === 'object' && raw !== null && 'partitionKey' in raw ? String(raw.partitionKey) : '?';
  if (!parsed.success) throw corrupt(id, zodIssues(parsed.error, 'stored'));
  const e = parsed.data;
  return {
    id: e.partitionKey,
    // The shapes were checked where it matters (kinds); the rest was written by this code.
    definition: e.definition as unknown as ScheduleDefinition,
    definitionKey: e.definitionKey,
    mode: e.mode,
    state: e.state,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
    nextFireAt: e.nextFireAt === '' ? undefined : e.nextFireAt,
    runs: e.runs as unknown as RunRecord[],
    runCount: e.runCount,
    firedCount: e.firedCount,
    triggers: e.triggers,
    settled: e.settled,
    controlVersion: e.controlVersion,
    ackVersion: e.ackVersion,
    sequenceNumber: e.sequenceNumber === '' ? undefined : e.sequenceNumber,
    createdBy: e.createdBy,
    etag: e.etag,
  };
}

function toEntity(row: NewScheduleRow): Record<string, unknown> & { partitionKey: string; rowKey: string } {
  return {
    partitionKey: row.id,
    rowKey,
    definition: JSON.stringify(row.definition),
    definitionKey: row.definitionKey,
    mode: row.mode,
    state: row.state,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    nextFireAt: row.nextFireAt ?? '',
    runs: JSON.stringify(row.runs),
    runCount: row.runCount,
    firedCount: row.firedCount,
    triggers: JSON.stringify(row.triggers),
    settled: JSON.stringify(row.settled),
    controlVersion: row.controlVersion,
    ackVersion: row.ackVersion,
    sequenceNumber: row.sequenceNumber ?? '',
    createdBy: row.createdBy === undefined ? '' : JSON.stringify(row.createdBy),
    // A function-level creator's owner in a column of its own: the live schedules of one owner are one
    // query (its share of TALLYHO_SCHEDULES_MAX_LIVE, which admin creates take no part in).
    owner: row.createdBy?.level === 'function' ? (row.createdBy.owner ?? '') : '',
  };
}

function etagOf(response: { etag?: string }, id: string): string {
  if (response.etag === undefined) throw new AppError('Internal', `Storage returned no ETag writing schedule ${id}`);
  return response.etag;
}

export interface ListPage {
  readonly rows: readonly ScheduleRow[];
  readonly continuationToken: string | undefined;
}

export class ScheduleTable {
  constructor(private readonly table: () => Promise<TableClient>) {}

  async read(id: string): Promise<ScheduleRow | undefined> {
    const table = await this.table();
    let raw: TableEntityResult<Record<string, unknown>>;
    try {
      raw = await table.getEntity(id, rowKey);
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading schedule ${id}`);
    }
    return parseRow(raw);
  }

  /** Insert-if-absent; `created: false` returns the row that was there. */
  async create(row: NewScheduleRow): Promise<{ created: boolean; row: ScheduleRow }> {
    const table = await this.table();
    try {
      const response = await table.createEntity(toEntity(row));
      return { created: true, row: { ...row, etag: etagOf(response, row.id) } };
    } catch (err) {
      if (!hasStatus(err, 409)) throw translateStorageError(err, `creating schedule ${row.id}`);
    }
    const existing = await this.read(row.id);
    if (existing === undefined)
      throw new AppError('Conflict', `Schedule ${row.id} changed while being created; retry`, { retryAfterSeconds: 1 });
    return { created: false, row: existing };
  }

  /** Replaces the row if nobody wrote it since `current` was read; `LostRace` otherwise. */
  async replace(current: ScheduleRow, next: NewScheduleRow): Promise<ScheduleRow> {
    const table = await this.table();
    try {
      const response = await table.updateEntity(toEntity(next), 'Replace', { etag: current.etag });
      return { ...next, etag: etagOf(response, next.id) };
    } catch (err) {
      if (hasStatus(err, 412)) throw new LostRace(`schedule ${current.id} changed since it was read`);
      if (hasStatus(err, 404)) throw new AppError('NotFound', `Schedule ${current.id} no longer exists`);
      throw translateStorageError(err, `updating schedule ${current.id}`);
    }
  }

  /** Removes a row that never became a schedule (a create that failed before it started). */
  async remove(current: ScheduleRow): Promise<void> {
    const table = await this.table();
    try {
      await table.deleteEntity(current.id, rowKey, { etag: current.etag });
    } catch (err) {
      if (hasStatus(err, 412)) throw new LostRace(`schedule ${current.id} changed since it was read`);
      if (hasStatus(err, 404)) return;
      throw translateStorageError(err, `removing schedule ${current.id}`);
    }
  }

  /** One page of schedules in id order, optionally in one state. */
  async list(state: ScheduleStatus | undefined, page: PageRequest): Promise<Page<ScheduleRow>> {
    const filter = state === undefined ? `RowKey eq '${rowKey}'` : `RowKey eq '${rowKey}' and state eq '${state}'`;
    const query = { filter, list: `schedules?state=${state ?? ''}`, doing: 'listing schedules', strict: true };
    return listPage(await this.table(), query, page, parseRow);
  }

  /**
   * Schedules not yet over (pending, active, paused), counted up to `atMost` (the scan stops there):
   * in all, or of one `owner` (a Caller id). With `perOwner`, no owner's function-level schedules
   * count for more than that many: an owner's creates past its share are being taken back (they
   * found themselves over it), so they must not refuse another owner's create meanwhile. A
   * cross-partition scan that reads only the owner column: the cap on function-level creates pays
   * it, nothing else.
   */
  async countLive(atMost: number, options: { readonly owner?: string; readonly perOwner?: number } = {}): Promise<number> {
    const table = await this.table();
    const live = odata`RowKey eq ${rowKey} and (state eq ${'pending'} or state eq ${'active'} or state eq ${'paused'})`;
    const filter = options.owner === undefined ? live : `${live} and ${odata`owner eq ${options.owner}`}`;
    const byOwner = new Map<string, number>();
    let count = 0;
    try {
      const pages = table.listEntities<{ owner?: unknown }>({ queryOptions: { filter, select: ['owner'] } }).byPage({ maxPageSize: 1000 });
      for await (const page of pages) {
        for (const row of page) {
          const owner = typeof row.owner === 'string' ? row.owner : '';
          const n = (byOwner.get(owner) ?? 0) + 1;
          byOwner.set(owner, n);
          if (owner === '' || options.perOwner === undefined || n <= options.perOwner) count++;
        }
        if (count >= atMost) return atMost;
      }
    } catch (err) {
      throw translateStorageError(err, 'counting live schedules');
    }
    return count;
  }

  /**
   * One page of orchestration-mode schedules that say `active` or `paused` with a next fire before
   * `before` (an ISO time: stored fire times are ISO-8601 UTC, so text order is time order). The
   * service filters, so a healthy index answers with nothing.
   */
  async listOverdue(before: string, pageSize: number, continuationToken: string | undefined): Promise<ListPage> {
    const filter = odata`RowKey eq ${rowKey} and mode eq ${'orchestration'} and (state eq ${'active'} or state eq ${'paused'}) and nextFireAt ne ${''} and nextFireAt lt ${before}`;
    return this.page(filter, pageSize, continuationToken);
  }

  private async page(filter: string, pageSize: number, continuationToken: string | undefined): Promise<ListPage> {
    const table = await this.table();
    try {
      const pages = table
        .listEntities({ queryOptions: { filter } })
        .byPage({ maxPageSize: pageSize, ...(continuationToken === undefined ? {} : { continuationToken }) });
      const next = await pages.next();
      if (next.done === true) return { rows: [], continuationToken: undefined };
      const page = next.value;
      return { rows: page.map(parseRow), continuationToken: page.continuationToken };
    } catch (err) {
      throw translateStorageError(err, 'listing schedules');
    }
  }
}
