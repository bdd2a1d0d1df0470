/**
 * Callers as a resource (docs/security.md "Callers"): an admin issues a named caller a credential
 * with roles, lists them, and revokes one. The credential is answered once and never stored: the
 * row keeps its id (`jti`) and what it grants. A name holds one live credential at a time; once
 * revoked or expired, the name may be issued again (a new credential, a new id).
 */
import type { TableClient } from '@azure/data-tables';

import { AppError, validationError } from '../errors';
import { credentialClockToleranceSeconds, issueCredential } from '../identity/credentials';
import { formatRoles, parseRoles } from '../identity/caller';
import { LostRace, retryContextOf } from '../retry';
import type { Runtime } from '../runtime';
import { CappedSet } from '../storage/cappedSet';
import type { Revocations } from './revocations';
import type { CallerSettings } from './settings';
import { callerSettings } from './settings';
import type { CallerRecord, CallerStore } from './store';

export interface IssueRequest {
  readonly name: string;
  readonly roles: readonly string[];
  readonly expiresInSeconds?: number | undefined;
}

export interface Issued {
  readonly caller: CallerRecord;
  /** Shown this once. */
  readonly credential: string;
}

export interface RegistryDeps extends Pick<Runtime, 'clock' | 'random' | 'logger' | 'backoff'> {
  readonly settings: CallerSettings;
  readonly store: CallerStore;
  readonly names: CappedSet;
  readonly revocations: Revocations;
  /** TALLYHO_CREDENTIALS_KEY (undefined: this deployment issues no credentials). */
  readonly credentialsKey: Buffer | undefined;
}

export function callerNames(
  deps: Pick<RegistryDeps, 'clock' | 'random' | 'logger' | 'backoff' | 'settings'>,
  table: () => Promise<TableClient>,
): CappedSet {
  return new CappedSet({
    table,
    partitionKey: '|names',
    max: deps.settings.maxCallers,
    noun: 'named callers',
    setting: callerSettings.settings.maxCallers.env,
    retry: retryContextOf(deps, 'the named caller count'),
  });
}

export class CallerRegistry {
  constructor(private readonly deps: RegistryDeps) {}

  async issue(request: IssueRequest, by: string): Promise<Issued> {
    const { deps } = this;
    const key = deps.credentialsKey;
    if (key === undefined) {
      throw new AppError('Conflict', 'This deployment issues no credentials: set TALLYHO_CREDENTIALS_KEY first');
    }
    const roles = parseRoles(request.roles);
    if ('unknown' in roles) {
      throw validationError(`Not roles: ${roles.unknown.join(', ')}`, [
        { path: 'body.roles', message: 'Use admin, submitter, worker:* or worker:<processor>' },
      ]);
    }
    const existing = await deps.store.read(request.name);
    const now = deps.clock.now();
    if (existing !== undefined && isLive(existing.caller, now)) {
      throw new AppError('Conflict', `Caller ${request.name} holds a credential: revoke it first (DELETE /api/callers/${request.name})`);
    }
    const issued = await issueCredential(
      key,
      { name: request.name, roles, ...(request.expiresInSeconds === undefined ? {} : { expiresInSeconds: request.expiresInSeconds }) },
      new Date(now),
    );
    // The place is the credential's, so a revocation gives back exactly the place it took.
    await this.admitPlace(placeOf(issued.id), now);
    const caller: CallerRecord = {
      name: request.name,
      roles: formatRoles(roles),
      credentialId: issued.id,
      issuedAt: now,
      expiresAt: issued.expiresAt === undefined ? null : Date.parse(issued.expiresAt),
      revokedAt: null,
      issuedBy: by,
    };
    try {
      await deps.store.write(caller, existing?.etag);
    } catch (err) {
      // Another admin issued or revoked it at the same moment: this credential was never shown, so it is nobody's.
      // (Any other failure may have written the row: its place stays taken, and a revocation gives it back.)
      if (err instanceof LostRace) {
        await deps.names.release(placeOf(issued.id));
        throw new AppError('Conflict', `Caller ${request.name} changed meanwhile; read it and try again`);
      }
      throw err;
    }
    // An expired credential this one replaces is nobody's any more: its place goes back (a no-op if a sweep gave it back).
    if (existing !== undefined && existing.caller.revokedAt === null) await deps.names.release(placeOf(existing.caller.credentialId));
    deps.logger.log('info', 'callers.issued', { caller: request.name, credential: issued.id, roles: caller.roles, by });
    return { caller, credential: issued.credential };
  }

  list(): Promise<CallerRecord[]> {
    return this.deps.store.list();
  }

  /** Revokes the caller's credential: refused on this instance at once, on every other within the revocation cache's bound. */
  async revoke(name: string, by: string): Promise<CallerRecord> {
    const { deps } = this;
    for (let attempt = 0; attempt < 5; attempt++) {
      const stored = await deps.store.read(name);
      if (stored === undefined) throw new AppError('NotFound', `No caller ${name}`);
      const { caller } = stored;
      // The revocation row first: from its write on, the credential is refused wherever the cache has expired.
      await deps.store.revoke(caller.credentialId, name, caller.revokedAt ?? deps.clock.now());
      deps.revocations.revoked(caller.credentialId);
      if (caller.revokedAt !== null) return this.givePlaceBack(caller);
      const revoked = { ...caller, revokedAt: deps.clock.now() };
      try {
        await deps.store.write(revoked, stored.etag);
        deps.logger.log('info', 'callers.revoked', { caller: name, credential: caller.credentialId, by });
        return await this.givePlaceBack(revoked);
      } catch (err) {
        if (!(err instanceof LostRace)) throw err;
      }
    }
    throw new AppError('ConcurrencyExhausted', `Caller ${name} keeps changing; try again`, { retryAfterSeconds: 1 });
  }

  /**
   * Takes a place in TALLYHO_CALLERS_MAX. When the cap is full, the places of credentials that have
   * expired go back first (an expired credential is refused on use, so it holds nothing but its row),
   * and the place is asked for once more: expired credentials never fill the cap. Done only when full,
   * as listing the callers is the one read here that grows with the cap.
   */
  private async admitPlace(place: string, now: number): Promise<void> {
    const { names, store } = this.deps;
    try {
      await names.admit(place);
      return;
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'Conflict')) throw err;
      const expired = (await store.list()).filter((c) => c.revokedAt === null && !isLive(c, now));
      const freed = await Promise.all(expired.map((c) => names.release(placeOf(c.credentialId))));
      if (!freed.includes(true)) throw err;
    }
    await names.admit(place);
  }

  /**
   * A revoked credential's place in TALLYHO_CALLERS_MAX goes back once its row says revoked (so an
   * issue racing the revocation takes a place of its own, for its own credential). Revoking again
   * gives back a place a revocation cut short kept. A name's place from before places were per
   * credential goes back with it.
   */
  private async givePlaceBack(caller: CallerRecord): Promise<CallerRecord> {
    await this.deps.names.release(placeOf(caller.credentialId));
    await this.deps.names.release(caller.name);
    return caller;
  }
}

/** Not revoked and not expired: the credential may still be accepted on use (expiry counts the verifier's tolerance). */
const isLive = (caller: CallerRecord, now: number): boolean =>
  caller.revokedAt === null && (caller.expiresAt === null || caller.expiresAt + credentialClockToleranceSeconds * 1000 > now);

/** A credential's member of the set of live credentials (`:` is in no caller name, so no name's member collides). */
const placeOf = (credentialId: string): string => `jti:${credentialId}`;
