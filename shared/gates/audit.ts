/**
 * The gate audit log: one table row per create, release and reset — who, when, which generation, how.
 * Written by the announce activity with insert-if-absent, so an activity retry records nothing twice.
 * Rows sort by generation, then opening before release.
 */
import type { TableClient } from '@azure/data-tables';
import { z } from 'zod';

import { hasStatus, translateStorageError } from '../storage/errors';
import { listRows, type Listing } from '../storage/list';
import type { AnnounceInput, AnnounceKind } from './messages';
import { releaseHows } from './operations';

const auditKinds = ['create', 'release', 'reset'] as const satisfies readonly AnnounceKind[];

export const auditRecordSchema = z
  .object({
    gate: z.string(),
    kind: z.enum(auditKinds),
    generation: z.int(),
    at: z.string().meta({ description: 'When it happened (the orchestration time).' }),
    by: z.string(),
    how: z.enum(releaseHows),
    note: z.string().optional(),
    recordedAt: z.string().meta({ description: 'When the audit row was written.' }),
  })
  .meta({ id: 'GateAuditRecord' });

export type AuditRecord = z.output<typeof auditRecordSchema>;

function rowKey(generation: number, kind: AnnounceKind): string {
  return `${String(generation).padStart(10, '0')}-${kind === 'release' ? 2 : 1}-${kind}`;
}

export function auditRecordOf(input: AnnounceInput, recordedAt: string): AuditRecord {
  const { gate } = input;
  const release = input.kind === 'release' ? gate.release : null;
  return {
    gate: gate.name,
    kind: input.kind,
    generation: release?.generation ?? gate.generation,
    at: release?.at ?? gate.generationStartedAt,
    by: input.by,
    how: input.how,
    ...(input.note === undefined ? {} : { note: input.note }),
    recordedAt,
  };
}

export class GateAuditLog {
  constructor(private readonly table: () => Promise<TableClient>) {}

  /** Records it unless already recorded (an activity retry); true when this call wrote the row. */
  async record(record: AuditRecord): Promise<boolean> {
    const table = await this.table();
    try {
      await table.createEntity({ partitionKey: record.gate, rowKey: rowKey(record.generation, record.kind), ...record });
      return true;
    } catch (err) {
      if (hasStatus(err, 409)) return false;
      throw translateStorageError(err, `recording the ${record.kind} of gate ${record.gate}`);
    }
  }

  /** Names of up to `limit` gates, in name order: every gate's log opens with its generation-1 create. */
  async gateNames(limit: number): Promise<Listing<string>> {
    const filter = `RowKey eq '${rowKey(1, 'create')}'`;
    return listRows(await this.table(), { filter, limit, doing: 'listing gates' }, (row) => row.partitionKey ?? '');
  }

  /** The newest `limit` records of a gate, oldest first. */
  async list(gate: string, limit: number): Promise<AuditRecord[]> {
    const table = await this.table();
    const rows: AuditRecord[] = [];
    try {
      const filter = `PartitionKey eq '${gate.replace(/'/g, "''")}'`;
      for await (const entity of table.listEntities({ queryOptions: { filter } })) {
        const parsed = auditRecordSchema.safeParse(entity);
        if (parsed.success) rows.push(parsed.data);
      }
    } catch (err) {
      throw translateStorageError(err, `reading the audit log of gate ${gate}`);
    }
    return rows.slice(-limit);
  }
}
