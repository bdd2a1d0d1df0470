/**
 * Roles per route (shared/identity/access.ts, checked in shared/http/route.ts before the body is
 * read) and ownership (shared/ownership.ts): who passes each role, that a worker of Q is refused P
 * however it names P, and that a stranger's answer is the 404 of a resource that does not exist.
 */
import { readSettings } from '../../../shared/config';
import { isAppError } from '../../../shared/errors';
import { authorization, routeNames } from '../../../shared/http/authorization';
import { defineRoute } from '../../../shared/http/route';
import { type ProcessorWorkers, requireRole } from '../../../shared/identity/access';
import { type Caller, masterKeyCaller } from '../../../shared/identity/caller';
import { issueCredential } from '../../../shared/identity/credentials';
import { createCallerResolver } from '../../../shared/identity/resolve';
import { identitySettings } from '../../../shared/identity/settings';
import { requireOwnerOf } from '../../../shared/jobs/ledger/jobRecord';
import type { JobRecord } from '../../../shared/jobs/ledger/jobRecord';
import { owns } from '../../../shared/ownership';

const caller = (id: string, roles: Partial<Caller['roles']>): Caller => ({
  id,
  kind: 'credential',
  roles: { admin: false, submitter: false, workerOf: [], ...roles },
});
const submitterA = caller('cred:a', { submitter: true });
const submitterB = caller('cred:b', { submitter: true });
const workerQ = caller('cred:wq', { workerOf: ['q'] });
const listedWorker = caller('cred:wp', {});
const admin = caller('cred:ops', { admin: true });
const p: ProcessorWorkers = { processor: 'p', workers: ['cred:wp'] };

function status(fn: () => void): number | 'passes' {
  try {
    fn();
    return 'passes';
  } catch (err) {
    return isAppError(err) ? err.status : 500;
  }
}

describe('roles', () => {
  test('every route of the table names its role, and admin-level routes need the admin role', () => {
    for (const name of routeNames()) {
      const { level, role } = authorization[name];
      if (level === 'admin') expect({ name, role }).toEqual({ name, role: 'admin' });
      if (level === 'anonymous') expect({ name, role }).toEqual({ name, role: 'anonymous' });
      if (level === 'function')
        expect({ name, role }).toEqual({ name, role: expect.stringMatching(/^(identified|caller|submitter|worker|owner)$/) });
    }
  });

  test.each([
    ['submitter', submitterA, 'passes'],
    ['submitter', workerQ, 403],
    ['submitter', admin, 'passes'],
    ['owner', submitterB, 'passes'],
    ['owner', workerQ, 403],
    ['admin', submitterA, 403],
    ['admin', admin, 'passes'],
    ['caller', listedWorker, 403],
  ] as const)('%s: %o → %s', (role, who, expected) => {
    expect(status(() => requireRole(who, role))).toBe(expected);
  });

  test("a worker of Q cannot work P; the caller P's declaration names can, without any role; an admin and worker:* can", () => {
    expect(status(() => requireRole(workerQ, 'worker', p))).toBe(403);
    expect(status(() => requireRole(submitterA, 'worker', p))).toBe(403);
    expect(status(() => requireRole(listedWorker, 'worker', p))).toBe('passes');
    expect(status(() => requireRole(admin, 'worker', p))).toBe('passes');
    expect(status(() => requireRole(caller('cred:all', { workerOf: '*' }), 'worker', p))).toBe('passes');
    // No such processor: anyone with a role gets the route's own 404; no role at all, 403.
    expect(status(() => requireRole(workerQ, 'worker', undefined))).toBe('passes');
    expect(status(() => requireRole(listedWorker, 'worker', undefined))).toBe(403);
  });

  test('the route refuses a worker of Q before it reads the body, and names the role', async () => {
    let reached = false;
    let bodyRead = false;
    const route = defineRoute({
      name: 'leasesTake',
      method: 'POST',
      path: 'processors/{name}/leases',
      summary: 't',
      tags: [],
      workerTarget: () => Promise.resolve(p),
      responses: {},
      handle: () => {
        reached = true;
        return Promise.resolve({ status: 204 });
      },
    });
    const key = Buffer.alloc(32, 7);
    const asQ = (await issueCredential(key, { name: 'wq', roles: workerQ.roles })).credential;
    const settings = readSettings({ identity: identitySettings }, { TALLYHO_CREDENTIALS_KEY: key.toString('base64') }).identity;
    const resolver = createCallerResolver(settings, { appServiceAuthEnabled: false });
    const res = await route.run(
      {
        method: 'POST',
        url: 'http://localhost/api/processors/p/leases',
        headers: { get: (n: string) => (n === 'authorization' ? `Bearer ${asQ}` : null) },
        params: { name: 'p' },
        query: new URLSearchParams(),
        text: () => {
          bodyRead = true;
          return Promise.resolve('{}');
        },
      },
      { callers: () => resolver },
    );
    expect({ status: res.status, reached, bodyRead }).toEqual({ status: 403, reached: false, bodyRead: false });
    expect(res.jsonBody).toMatchObject({ code: 'Forbidden', detail: expect.stringContaining('worker role of processor p') });
  });
});

describe('ownership', () => {
  const job = { id: 'k-1', owner: 'cred:a' } as JobRecord;

  test('the owner and an admin read a job; a stranger gets the same 404 as for a job that does not exist', () => {
    expect(requireOwnerOf(job, submitterA)).toBe(job);
    expect(requireOwnerOf(job, admin)).toBe(job);
    expect(requireOwnerOf(job, masterKeyCaller)).toBe(job);
    let refused: unknown;
    try {
      requireOwnerOf(job, submitterB);
    } catch (err) {
      refused = err;
    }
    expect(refused).toMatchObject({ status: 404, code: 'NotFound', message: 'Job k-1 does not exist' });
  });

  test("a record from before owners were recorded is an admin's only", () => {
    expect(owns(submitterA, undefined)).toBe(false);
    expect(owns(admin, undefined)).toBe(true);
  });
});
