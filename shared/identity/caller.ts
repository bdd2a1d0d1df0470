/**
 * Who is calling: one value per request, made from what was authenticated (a verified token or
 * credential, or the key level the host enforced), never from text the caller presented. Every
 * route handler gets it (shared/http/route.ts); docs/security.md "Callers" has the model.
 *
 * An id names the identity across requests and instances: `entra:<object id>` (a Microsoft Entra
 * ID token or the App Service principal: one id space, so one identity through either door is one
 * caller), `cred:<name>` (a credential an admin issued), `admin:master-key`, `key:shared` (every
 * holder of a function key who presents no credential: the host does not tell the app which key
 * it matched, devhost/docs/real-host.md#what-the-worker-learns-about-the-caller) and `anonymous`.
 */

/**
 * `keys`: the host's keys are the door (function and admin levels as declared) and a credential names
 * the caller; `entra`: every route is anonymous to the host and the app requires a Microsoft Entra ID
 * token (or a credential); `keys+entra`: keys are the door and an Entra token names the caller.
 */
export type AuthMode = 'keys' | 'entra' | 'keys+entra';

/** The level a route requires (shared/http/authorization.ts declares it per route). */
export type RouteLevel = 'anonymous' | 'function' | 'admin';

/** Request headers as a route reads them (case-insensitive names; duplicates joined). */
export interface HeaderReader {
  get(name: string): string | null;
}

type CallerKind = 'entra' | 'appService' | 'credential' | 'masterKey' | 'sharedKey' | 'anonymous';

export interface Roles {
  /** Every action, including the admin routes. */
  readonly admin: boolean;
  /** Submits and follows work: jobs, schedules, gated runs, stream appends. */
  readonly submitter: boolean;
  /** The processors whose batches it may lease, extend and complete: `*` for all. */
  readonly workerOf: '*' | readonly string[];
}

export interface Caller {
  readonly id: string;
  readonly kind: CallerKind;
  readonly roles: Roles;
  /** A name for audit lines (a display name, an app id); never used to decide anything. */
  readonly name?: string;
}

const noRoles: Roles = { admin: false, submitter: false, workerOf: [] };

export const anonymousCaller: Caller = { id: 'anonymous', kind: 'anonymous', roles: noRoles };

/** Whoever reached an admin-level route where the host checks keys: only the master key opens one. */
export const masterKeyCaller: Caller = {
  id: 'admin:master-key',
  kind: 'masterKey',
  roles: { admin: true, submitter: true, workerOf: '*' },
  name: 'master key',
};

export function sharedKeyCaller(roles: Roles): Caller {
  return { id: 'key:shared', kind: 'sharedKey', roles, name: 'function key' };
}

/** Whether the caller holds any role at all (an identity without one may call nothing but anonymous routes). */
export function hasAnyRole(caller: Caller): boolean {
  const { admin, submitter, workerOf } = caller.roles;
  return admin || submitter || workerOf === '*' || workerOf.length > 0;
}

/** A processor name as a role names it (the same rule as declaring one: lowercase letters, digits, single hyphens). */
const processorName = /^[a-z](?:-?[a-z0-9])*$/;

/**
 * Roles from their text form, as settings and credentials spell them: `admin`, `submitter`,
 * `worker:*` or `worker:<processor>`. Answers the unknown entries instead when there are any.
 */
export function parseRoles(entries: readonly string[]): Roles | { readonly unknown: readonly string[] } {
  let admin = false;
  let submitter = false;
  let all = false;
  const workers = new Set<string>();
  const unknown: string[] = [];
  for (const entry of entries) {
    if (entry === 'admin') admin = true;
    else if (entry === 'submitter') submitter = true;
    else if (entry === 'worker:*') all = true;
    else if (entry.startsWith('worker:') && processorName.test(entry.slice('worker:'.length))) workers.add(entry.slice('worker:'.length));
    else unknown.push(entry);
  }
  if (unknown.length > 0) return { unknown };
  return { admin, submitter, workerOf: all ? '*' : [...workers].sort() };
}

/** The text form of roles (the inverse of parseRoles). */
export function formatRoles(roles: Roles): string[] {
  return [
    ...(roles.admin ? ['admin'] : []),
    ...(roles.submitter ? ['submitter'] : []),
    ...(roles.workerOf === '*' ? ['worker:*'] : roles.workerOf.map((p) => `worker:${p}`)),
  ];
}

/**
 * Roles from Microsoft Entra app-role values (the `roles` claim): `Tallyho.Admin`,
 * `Tallyho.Submitter`, `Tallyho.Worker` (every processor) and `Tallyho.Worker.<processor>`. Values
 * of other apps' roles are ignored: a token may carry roles Tallyho does not define.
 */
export function rolesFromAppRoles(values: readonly string[]): Roles {
  const entries: string[] = [];
  for (const value of values) {
    if (value === 'Tallyho.Admin') entries.push('admin');
    else if (value === 'Tallyho.Submitter') entries.push('submitter');
    else if (value === 'Tallyho.Worker') entries.push('worker:*');
    else if (value.startsWith('Tallyho.Worker.')) entries.push(`worker:${value.slice('Tallyho.Worker.'.length)}`);
  }
  // A worker role naming no valid processor grants nothing, rather than failing the whole token.
  const parsed = parseRoles(entries.filter((entry) => !('unknown' in parseRoles([entry]))));
  return 'unknown' in parsed ? noRoles : parsed;
}
