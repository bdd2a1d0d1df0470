/**
 * The six callers of the identity matrix (test/e2e/identityMatrix.test.ts) and what each route is
 * expected to answer them, from the route table (shared/http/authorization.ts): anonymous, two
 * submitters (A makes the owned resources, B is the stranger), a worker of processor P, a worker of
 * processor Q and an admin.
 *
 * In the keys modes each request still carries a key, as the host requires (the function key, the
 * master key for the admin), and a Tallyho credential names the caller. In `entra` mode each carries
 * a Microsoft Entra ID token of a local tenant (test/support/localTenant.ts) and no key.
 */
import { randomBytes, randomUUID } from 'node:crypto';

import { authorizationOf } from '../../../shared/http/authorization';
import type { RouteDefinition } from '../../../shared/http/route';
import { issueCredential } from '../../../shared/identity/credentials';
import type { Roles } from '../../../shared/identity/caller';
import type { LocalTenant } from '../../support/localTenant';
import type { E2eHost } from './harness';

export type Who = 'anonymous' | 'submitterA' | 'submitterB' | 'workerP' | 'workerQ' | 'admin';
export const everyone: readonly Who[] = ['anonymous', 'submitterA', 'submitterB', 'workerP', 'workerQ', 'admin'];

/**
 * What a caller must get: `answer` is the handler's own answer (neither 401 nor 403, and on an owned
 * resource not the stranger's 404); a number is that status exactly.
 */
export type Expected = 'answer' | 401 | 403 | 404;

export type Mode = 'keys' | 'entra';

/** The expected class of `route` for `who`, by the table's key level and role. */
export function expectedFor(route: RouteDefinition, who: Who, mode: Mode): Expected {
  const { level, role } = authorizationOf(route.name);
  if (level === 'anonymous') return 'answer';
  if (who === 'anonymous') return 401;
  // Keys modes: the host refuses a function key on an admin route; entra: the app refuses the role.
  if (level === 'admin') return who === 'admin' ? 'answer' : mode === 'keys' ? 401 : 403;
  const submitter = who === 'submitterA' || who === 'submitterB' || who === 'admin';
  switch (role) {
    case 'identified':
      return 'answer';
    case 'caller':
      // workerP holds no role: only P's declaration names it, which opens P's batches and nothing else.
      return who === 'workerP' ? 403 : 'answer';
    case 'submitter':
      return submitter ? 'answer' : 403;
    case 'worker':
      return who === 'workerP' || who === 'admin' ? 'answer' : 403;
    case 'owner':
      return who === 'submitterA' || who === 'admin' ? 'answer' : who === 'submitterB' ? 404 : 403;
    case 'admin':
    case 'anonymous':
      throw new Error(`route ${route.name}: role ${role} on a function-level route`);
  }
}

/** The processors of the matrix: P names its worker in its declaration, Q's worker holds a role for it. */
export interface Processors {
  readonly p: string;
  readonly q: string;
}

/** Request headers per caller (the key and the credential or token). */
export type Identities = Readonly<Record<Who, Readonly<Record<string, string>>>>;

export interface Issued {
  readonly identities: Identities;
  /** The caller id of workerP, which P's declaration lists in `workers`. */
  readonly workerPId: string;
}

const roles = (r: Partial<Roles>): Roles => ({ admin: false, submitter: false, workerOf: [], ...r });

/** Keys mode: one credential per caller, sent with the key the route's host level needs. */
export async function keyIdentities(host: E2eHost, key: Buffer, processors: Processors, tag: string): Promise<Issued> {
  const cred = async (name: string, r: Roles): Promise<string> => (await issueCredential(key, { name, roles: r })).credential;
  const fnKey = host.keys.function ?? '';
  const withKey = (value: string, credential: string) => ({ 'x-functions-key': value, authorization: `Bearer ${credential}` });
  const workerP = `worker-p-${tag}`;
  return {
    workerPId: `cred:${workerP}`,
    identities: {
      anonymous: {},
      submitterA: withKey(fnKey, await cred(`sub-a-${tag}`, roles({ submitter: true }))),
      submitterB: withKey(fnKey, await cred(`sub-b-${tag}`, roles({ submitter: true }))),
      // No role: P's declaration names it.
      workerP: withKey(fnKey, await cred(workerP, roles({}))),
      workerQ: withKey(fnKey, await cred(`worker-q-${tag}`, roles({ workerOf: [processors.q] }))),
      // The master key opens admin routes at the host and function routes alike; the credential names the admin.
      admin: withKey(host.keys.admin ?? '', await cred(`ops-${tag}`, roles({ admin: true }))),
    },
  };
}

/** Entra mode: a token per caller, its app roles as Entra would put them; no key. */
export async function entraIdentities(tenant: LocalTenant, processors: Processors): Promise<Issued> {
  const oid = { a: randomUUID(), b: randomUUID(), p: randomUUID(), q: randomUUID(), admin: randomUUID() };
  const bearer = async (id: string, r: readonly string[]) => ({ authorization: `Bearer ${await tenant.tokenFor(id, r)}` });
  return {
    workerPId: `entra:${oid.p}`,
    identities: {
      anonymous: {},
      submitterA: await bearer(oid.a, ['Tallyho.Submitter']),
      submitterB: await bearer(oid.b, ['Tallyho.Submitter']),
      workerP: await bearer(oid.p, []),
      workerQ: await bearer(oid.q, [`Tallyho.Worker.${processors.q}`]),
      admin: await bearer(oid.admin, ['Tallyho.Admin']),
    },
  };
}

export const newTag = (): string => randomBytes(3).toString('hex');

export interface Sent {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** Requests as one of the identities: `send` answers what came back, `made` throws unless it was a success. */
export function requestsAs(host: () => E2eHost, ids: () => Identities) {
  async function send(who: Who, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Sent> {
    const res = await fetch(host().url(path), {
      method,
      headers: { ...ids()[who], ...extra, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  }
  async function made(
    who: Who,
    method: string,
    path: string,
    body?: unknown,
    extra?: Record<string, string>,
  ): Promise<Record<string, unknown>> {
    const res = await send(who, method, path, body, extra);
    if (res.status >= 300) throw new Error(`${who} ${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }
  return { send, made };
}
