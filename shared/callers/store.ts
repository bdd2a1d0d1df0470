/**
 * The `callers` table: the callers an admin named (`POST /api/callers`) and the credentials revoked.
 *
 * - partition `c`, RowKey = name: the caller's roles, its current credential's id (`jti`), when it was
 *   issued, when it expires and when it was revoked (-1: not). Never the credential itself: it is
 *   shown once, in the answer that issues it.
 * - partition `r`, RowKey = a credential id: that credential is revoked. A credential is checked
 *   against this row on use (./revocations.ts), so a revocation needs no settings change and holds
 *   for credentials issued any way (`issueCredential`, a script).
 * - partition `|names`: the capped set of names (TALLYHO_CALLERS_MAX).
 */
import type { TableClient } from '@azure/data-tables';

import { AppError } from '../errors';
import { LostRace } from '../retry';
import { hasStatus, translateStorageError } from '../storage/errors';

export interface CallerRecord {
  readonly name: string;
  /** Roles in their text form (`admin`, `submitter`, `worker:*`, `worker:<processor>`). */
  readonly roles: readonly string[];
  readonly credentialId: string;
  readonly issuedAt: number;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
  /** The Caller id of the admin who issued it. */
  readonly issuedBy: string;
}

export interface StoredCaller {
  readonly caller: CallerRecord;
  readonly etag: string;
}

const callerPartition = 'c';
const revokedPartition = 'r';

const optional = (value: unknown): number | null => (typeof value === 'number' && value >= 0 ? value : null);

function parse(name: string, raw: Record<string, unknown>): CallerRecord {
  if (typeof raw.credentialId !== 'string' || typeof raw.issuedAt !== 'number') {
    throw new AppError('CorruptState', `Caller ${name}: its row is not one`);
  }
  return {
    name,
    roles: typeof raw.roles === 'string' && raw.roles !== '' ? raw.roles.split(',') : [],
    credentialId: raw.credentialId,
    issuedAt: raw.issuedAt,
    expiresAt: optional(raw.expiresAt),
    revokedAt: optional(raw.revokedAt),
    issuedBy: typeof raw.issuedBy === 'string' ? raw.issuedBy : '',
  };
}

export class CallerStore {
  constructor(private readonly table: () => Promise<TableClient>) {}

  async read(name: string): Promise<StoredCaller | undefined> {
    const table = await this.table();
    try {
      const raw = await table.getEntity<Record<string, unknown>>(callerPartition, name);
      return { caller: parse(name, raw), etag: raw.etag };
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      if (err instanceof AppError) throw err;
      throw translateStorageError(err, `reading caller ${name}`);
    }
  }

  /** Inserts the caller (`etag` undefined) or replaces the row read at `etag`; LostRace when it changed meanwhile. */
  async write(caller: CallerRecord, etag: string | undefined): Promise<void> {
    const table = await this.table();
    const entity = {
      partitionKey: callerPartition,
      rowKey: caller.name,
      roles: caller.roles.join(','),
      credentialId: caller.credentialId,
      issuedAt: caller.issuedAt,
      expiresAt: caller.expiresAt ?? -1,
      revokedAt: caller.revokedAt ?? -1,
      issuedBy: caller.issuedBy,
    };
    try {
      if (etag === undefined) await table.createEntity(entity);
      else await table.updateEntity(entity, 'Replace', { etag });
    } catch (err) {
      if (hasStatus(err, 409) || hasStatus(err, 412) || hasStatus(err, 404)) throw new LostRace(`caller ${caller.name} changed`);
      throw translateStorageError(err, `writing caller ${caller.name}`);
    }
  }

  async list(): Promise<CallerRecord[]> {
    const table = await this.table();
    const out: CallerRecord[] = [];
    try {
      for await (const raw of table.listEntities<Record<string, unknown>>({
        queryOptions: { filter: `PartitionKey eq '${callerPartition}'` },
      })) {
        out.push(parse(String(raw.rowKey), raw));
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw translateStorageError(err, 'listing callers');
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** Records the credential revoked (idempotent). */
  async revoke(credentialId: string, name: string, at: number): Promise<void> {
    const table = await this.table();
    try {
      await table.upsertEntity({ partitionKey: revokedPartition, rowKey: credentialId, name, revokedAt: at }, 'Replace');
    } catch (err) {
      throw translateStorageError(err, `revoking a credential of caller ${name}`);
    }
  }

  async isRevoked(credentialId: string): Promise<boolean> {
    const table = await this.table();
    try {
      await table.getEntity(revokedPartition, credentialId, { queryOptions: { select: ['RowKey'] } });
      return true;
    } catch (err) {
      if (hasStatus(err, 404)) return false;
      throw translateStorageError(err, 'reading whether a credential is revoked');
    }
  }
}
