/**
 * Callers as a resource, on Azurite (shared/callers): an admin issues a named caller a credential,
 * lists callers without secrets, and revokes one; two instances of the app (two services on one
 * table, each with its own cache and resolver) refuse a revoked credential — the one that revoked
 * it at once, the other once TALLYHO_CREDENTIALS_REVOCATION_CACHE_SECONDS has passed on its clock
 * (a manual one: the bound is a clock advance, not a wait).
 */
import { randomBytes, randomUUID } from 'node:crypto';

import { type Callers, createCallers } from '../../shared/callers';
import { type Clock, ManualClock, systemClock } from '../../shared/clock';
import { readSettings } from '../../shared/config';
import { identitySettings } from '../../shared/identity';
import type { Caller } from '../../shared/identity/caller';
import { createCallerResolver } from '../../shared/identity/resolve';
import { MemoryLogger } from '../../shared/log';
import { defaultBackoff } from '../../shared/retry';
import { noTelemetry } from '../../shared/telemetry/port';
import { appErrorOf } from '../support/appErrors';
import { callersRoutes } from '../../shared/callers';
import { startFaultProxy } from '../support/faultProxy';
import { routeNamed, routeRequest } from '../support/routeRequest';
import { storageFor, uniqueTableName } from '../support/sequences';
import { runStorage } from '../support/storageAccounts';

const key = randomBytes(32);
const identity = readSettings({ identity: identitySettings }, { TALLYHO_CREDENTIALS_KEY: key.toString('base64') }).identity;

function instance(table: string, clock: Clock, options: { key?: Buffer | undefined; maxCallers?: number } = {}) {
  const storage = storageFor();
  const callers: Callers = createCallers({
    clock,
    random: Math.random,
    logger: new MemoryLogger(),
    telemetry: noTelemetry,
    backoff: defaultBackoff,
    newId: randomUUID,
    settings: { maxCallers: options.maxCallers ?? 10, revocationCacheSeconds: 30 },
    table: () => storage.table(table),
    credentialsKey: 'key' in options ? options.key : key,
  });
  const resolver = createCallerResolver(identity, { appServiceAuthEnabled: false }, { isRevoked: callers.isRevoked });
  const as = (credential: string): Promise<Caller> =>
    resolver.resolve({ get: (name) => (name === 'authorization' ? `Bearer ${credential}` : null) }, 'function');
  return { callers, as };
}

describe('named callers, on Azurite', () => {
  it('issues a credential shown once, lists callers without it, and a revocation holds on every instance within the cache bound', async () => {
    const table = uniqueTableName('callers');
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const a = instance(table, clock);
    const b = instance(table, clock);

    const issued = await a.callers.registry.issue({ name: 'thumbs-1', roles: ['worker:thumbs'] }, 'admin:master-key');
    expect(issued.credential).toMatch(/^tly1\./);
    expect(await b.as(issued.credential)).toMatchObject({ id: 'cred:thumbs-1', kind: 'credential', roles: { workerOf: ['thumbs'] } });
    const listed = await b.callers.registry.list();
    expect(listed).toEqual([
      expect.objectContaining({ name: 'thumbs-1', roles: ['worker:thumbs'], revokedAt: null, issuedBy: 'admin:master-key' }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(issued.credential.slice(5));
    // One live credential per name.
    expect(await appErrorOf(a.callers.registry.issue({ name: 'thumbs-1', roles: [] }, 'admin:master-key'))).toMatchObject({ status: 409 });

    await a.callers.registry.revoke('thumbs-1', 'admin:master-key');
    // The revoking instance refuses it at once; the other trusts its last look until the bound has passed.
    expect(await appErrorOf(a.as(issued.credential))).toMatchObject({ status: 401, detail: expect.stringMatching(/revoked/) });
    expect((await b.as(issued.credential)).id).toBe('cred:thumbs-1');
    await clock.advance(30_001);
    expect(await appErrorOf(b.as(issued.credential))).toMatchObject({ status: 401, detail: expect.stringMatching(/revoked/) });
    // A third instance started afterwards never accepts it.
    expect(await appErrorOf(instance(table, clock).as(issued.credential))).toMatchObject({ status: 401 });

    // Revoking again answers the same; the name can then be issued a new credential, and the old one stays refused.
    const again = await b.callers.registry.revoke('thumbs-1', 'admin:master-key');
    expect(again.revokedAt).not.toBeNull();
    const renewed = await b.callers.registry.issue({ name: 'thumbs-1', roles: ['submitter'] }, 'admin:master-key');
    expect(await a.as(renewed.credential)).toMatchObject({ id: 'cred:thumbs-1', roles: { submitter: true } });
    expect(await appErrorOf(a.as(issued.credential))).toMatchObject({ status: 401 });
  });

  it('refuses unknown roles, unknown names, names past TALLYHO_CALLERS_MAX, and issuing without TALLYHO_CREDENTIALS_KEY', async () => {
    const table = uniqueTableName('callers');
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const { callers } = instance(table, clock, { maxCallers: 2 });
    expect(await appErrorOf(callers.registry.issue({ name: 'x', roles: ['root'] }, 'admin'))).toMatchObject({ status: 400 });
    expect(await appErrorOf(callers.registry.revoke('nobody', 'admin'))).toMatchObject({ status: 404 });
    await callers.registry.issue({ name: 'one', roles: ['submitter'] }, 'admin');
    await callers.registry.issue({ name: 'two', roles: ['submitter'] }, 'admin');
    expect(await appErrorOf(callers.registry.issue({ name: 'three', roles: ['submitter'] }, 'admin'))).toMatchObject({ status: 409 });
    expect((await callers.registry.list()).map((c) => c.name)).toEqual(['one', 'two']);
    const keyless = instance(uniqueTableName('callers'), clock, { key: undefined });
    expect(await appErrorOf(keyless.callers.registry.issue({ name: 'one', roles: [] }, 'admin'))).toMatchObject({
      status: 409,
      detail: expect.stringMatching(/TALLYHO_CREDENTIALS_KEY/),
    });
    expect(await keyless.callers.registry.list()).toEqual([]);
  });

  it("an expired credential holds no place in TALLYHO_CALLERS_MAX once past the verifier's 60 s tolerance, and its name may be issued again without a revocation", async () => {
    const table = uniqueTableName('callers');
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const { callers } = instance(table, clock, { maxCallers: 2 });
    await callers.registry.issue({ name: 'brief', roles: ['submitter'], expiresInSeconds: 60 }, 'admin');
    await callers.registry.issue({ name: 'lasting', roles: ['submitter'] }, 'admin');
    expect(await appErrorOf(callers.registry.issue({ name: 'new', roles: [] }, 'admin'))).toMatchObject({ status: 409 });
    // Expired, but still inside the verifier's tolerance: it may still be accepted, so it keeps its place and its name.
    await clock.advance(90_000);
    expect(await appErrorOf(callers.registry.issue({ name: 'new', roles: [] }, 'admin'))).toMatchObject({ status: 409 });
    expect(await appErrorOf(callers.registry.issue({ name: 'brief', roles: [] }, 'admin'))).toMatchObject({ status: 409 });
    await clock.advance(31_000);
    // Full, so the expired credential's place goes back and the new caller takes it.
    await callers.registry.issue({ name: 'new', roles: ['submitter'] }, 'admin');
    expect(await placesTaken(table)).toBe(2);
    await callers.registry.revoke('new', 'admin');
    // The expired name is issued again without a revocation; the replaced credential's place is not counted twice.
    await callers.registry.issue({ name: 'brief', roles: ['submitter'] }, 'admin');
    expect(await placesTaken(table)).toBe(2);
    expect((await callers.registry.list()).filter((c) => c.revokedAt === null).map((c) => c.name)).toEqual(['brief', 'lasting']);
  });

  it('a revocation gives its place in TALLYHO_CALLERS_MAX back, and under concurrent issues and revocations on two instances the cap holds', async () => {
    const table = uniqueTableName('callers');
    // The system clock: two instances racing for the count row back off on it (a manual clock would never wake them).
    const a = instance(table, systemClock, { maxCallers: 2 });
    const b = instance(table, systemClock, { maxCallers: 2 });
    await a.callers.registry.issue({ name: 'one', roles: ['submitter'] }, 'admin');
    await b.callers.registry.issue({ name: 'two', roles: ['submitter'] }, 'admin');
    expect(await appErrorOf(a.callers.registry.issue({ name: 'three', roles: [] }, 'admin'))).toMatchObject({ status: 409 });
    await b.callers.registry.revoke('one', 'admin');
    // The revoked caller's place is free again, on either instance; its name may be issued again too.
    await a.callers.registry.issue({ name: 'three', roles: ['submitter'] }, 'admin');
    await a.callers.registry.revoke('three', 'admin');
    await b.callers.registry.issue({ name: 'one', roles: ['submitter'] }, 'admin');

    // Rounds of issues and revocations at once, through both instances: never more live callers than the cap.
    const names = ['one', 'two', 'three', 'four', 'five'];
    for (let round = 0; round < 6; round++) {
      const live = (await a.callers.registry.list()).filter((c) => c.revokedAt === null).map((c) => c.name);
      const ops = names.map((name, i) => {
        const via = (i + round) % 2 === 0 ? a : b;
        return live.includes(name) ? via.callers.registry.revoke(name, 'admin') : via.callers.registry.issue({ name, roles: [] }, 'admin');
      });
      const outcomes = await Promise.allSettled(ops);
      for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ status: 409 });
      const after = (await b.callers.registry.list()).filter((c) => c.revokedAt === null);
      expect(after.length).toBeLessThanOrEqual(2);
      // What the cap counts is exactly the live credentials: none leaks a place, none holds one uncounted.
      expect(await placesTaken(table)).toBe(after.length);
    }
  });
});

/** The places TALLYHO_CALLERS_MAX counts (the `|names` set's count row). */
async function placesTaken(table: string): Promise<number> {
  const row = await (await storageFor().table(table)).getEntity<{ n: number }>('|names', 'count').catch(() => ({ n: 0 }));
  return row.n;
}

describe('the revocation check with storage down', () => {
  it('answers a credentialed request 503 problem+json with Retry-After, never 500 and never let through, and serves it once storage is back', async () => {
    const proxy = await startFaultProxy(runStorage());
    try {
      const table = uniqueTableName('callers');
      const storage = storageFor(proxy.connectionString, {}, { TALLYHO_STORAGE_MAX_TRIES: '1' });
      const callers = createCallers({
        clock: systemClock,
        random: Math.random,
        logger: new MemoryLogger(),
        telemetry: noTelemetry,
        backoff: defaultBackoff,
        newId: randomUUID,
        settings: { maxCallers: 10, revocationCacheSeconds: 30 },
        table: () => storage.table(table),
        credentialsKey: key,
      });
      const { credential } = await callers.registry.issue({ name: 'reader-1', roles: ['submitter'] }, 'admin');
      const resolver = createCallerResolver(identity, { appServiceAuthEnabled: false }, { isRevoked: callers.isRevoked });
      const me = routeNamed(
        callersRoutes({ registry: () => callers.registry, openJobsOf: () => Promise.resolve(0), heldOf: () => 0, now: () => Date.now() }),
        'callersMe',
      );
      const ask = () => me.run(routeRequest(me, { headers: { authorization: `Bearer ${credential}` } }), { callers: () => resolver });

      // The callers table cannot be read: the connection is refused (a status from storage is the other case).
      proxy.setRules((r) => (r.service === 'table' ? { kind: 'refuse' } : undefined));
      const down = await ask();
      expect(down.status).toBe(503);
      expect(down.headers).toMatchObject({ 'content-type': 'application/problem+json', 'retry-after': expect.stringMatching(/^\d+$/) });
      expect(down.jsonBody).toMatchObject({ status: 503, code: 'DependencyUnavailable' });
      expect(JSON.stringify(down.jsonBody)).not.toMatch(/127\.0\.0\.1|ECONN|table|revok/i);
      proxy.setRules((r) => (r.service === 'table' ? { kind: 'status', status: 500, code: 'InternalError' } : undefined));
      expect((await ask()).status).toBe(503);

      proxy.setRules();
      const up = await ask();
      expect(up.status).toBe(200);
      expect(up.jsonBody).toMatchObject({ id: 'cred:reader-1' });
    } finally {
      await proxy.close();
    }
  });
});
