/**
 * The gate audit log: one row per create, release and reset — who, when, which generation, how —
 * in the gate's own partition of the `gates` table, written in the same entity group transaction as
 * the change it records, so the log can neither miss a change nor record one that did not happen.
 * Rows sort by generation, then opening before release.
 */
import type { TableClient } from '@azure/data-tables';
import * as z from 'zod';

import { pageOf } from '../http/paging';
import { hasStatus, translateStorageError } from '../storage/errors';
import { listPage, type Page, type PageRequest } from '../storage/list';
import { type AuditKind, auditKinds, type ReleaseHow, releaseHows } from './operations';
import { type GateEntity, odata, rowKeys } from './rows';

const auditRecordSchema = z
  .object({
    gate: z.string(),
    kind: z.enum(auditKinds),
    generation: z.int(),
    at: z.string().meta({ description: 'When it happened.' }),
    by: z.string(),
    how: z.enum(releaseHows),
    note: z.string().optional(),
    recordedAt: z.string().meta({ description: 'When the audit row was written.' }),
  })
  .meta({ id: 'GateAuditRecord' });

export type AuditRecord = z.output<typeof auditRecordSchema>;

export const auditPage = pageOf(auditRecordSchema, 'GateAuditPage', "A page of a gate's audit log, oldest first.", { unreadable: true });

export interface AuditInput {
  readonly gate: string;
  readonly kind: AuditKind;
  readonly generation: number;
  readonly at: string;
  readonly by: string;
  readonly how: ReleaseHow;
  readonly note?: string;
  /** The schedule the generation opened with (create, reset): what its schedule orchestration checks. */
  readonly releaseAt?: string | null;
}

/** The audit row (written with the change; `recordedAt` is the same moment, as they commit together). */
export function auditEntity(input: AuditInput): GateEntity {
  return {
    partitionKey: input.gate,
    rowKey: rowKeys.audit(input.generation, input.kind),
    gate: input.gate,
    kind: input.kind,
    generation: input.generation,
    at: input.at,
    by: input.by,
    how: input.how,
    ...(input.note === undefined ? {} : { note: input.note }),
    ...(input.releaseAt === undefined || input.releaseAt === null ? {} : { releaseAt: input.releaseAt }),
    recordedAt: input.at,
  };
}

const openedRow = z.object({ releaseAt: z.string().optional() });

export class GateAuditLog {
  constructor(private readonly table: () => Promise<TableClient>) {}

  /** A page of a gate's records, oldest first; a row that cannot be read is named under `unreadable`. */
  async list(gate: string, page: PageRequest): Promise<Page<AuditRecord>> {
    const [from, to] = rowKeys.auditRange;
    const query = {
      filter: `PartitionKey eq ${odata(gate)} and RowKey ge ${odata(from)} and RowKey lt ${odata(to)}`,
      list: `gates/${gate}/audit`,
      doing: `reading the audit log of gate ${gate}`,
    };
    return listPage(await this.table(), query, page, (row) => auditRecordSchema.parse(row));
  }

  /**
   * Whether generation `generation` was opened (created or reset into) with `releaseAt`: `opened`,
   * `other` (opened with another schedule: a concurrent create or reset won), or `absent` (not yet).
   */
  async opened(
    gate: string,
    generation: number,
    kind: 'create' | 'reset',
    releaseAt: string | null,
  ): Promise<'opened' | 'other' | 'absent'> {
    const table = await this.table();
    try {
      const row = await table.getEntity(gate, rowKeys.audit(generation, kind));
      const stored = openedRow.parse(row).releaseAt ?? null;
      return stored === releaseAt ? 'opened' : 'other';
    } catch (err) {
      if (hasStatus(err, 404)) return 'absent';
      throw translateStorageError(err, `reading the audit log of gate ${gate}`);
    }
  }
}
