/**
 * Who may call what: every HTTP route of the app with the key level the Functions host enforces on it
 * and, where the request body decides whether an admin action happens, the rule the route applies.
 *
 * This is the one place auth levels are declared. `defineRoute` takes a route's level from here (its
 * name must be a key of this table, so a route without an entry does not compile), functions/
 * registers that level with the host, the OpenAPI document states it, and tests check the running
 * host against it (test/e2e/authorization.test.ts) and docs/security.md against it.
 *
 * The host cannot tell a handler which key a caller used: it only refuses callers below a route's
 * level. So an admin action that a body can ask for is split by route: the function-level route
 * refuses it (403 naming the admin route), and an admin-level route accepts it.
 *
 * To add a route: one line here with its level (and a `rule` when its body can ask for an admin action).
 */

import type { RouteRole } from '../identity/access';
import { AppError } from '../errors';
import type { AuthMode } from '../identity/caller';

/** The Functions host enforces these: `function` needs a function (or host/master) key, `admin` the master key. */
export type AuthLevel = 'anonymous' | 'function' | 'admin';

/**
 * The level a read is answered at: the level of the route it came through, which the host enforced.
 * Where what a resource holds depends on who made it, a route and its admin-level twin answer the
 * same resource at their two levels (docs/security.md "Ownership").
 */
export type ReaderLevel = Exclude<AuthLevel, 'anonymous'>;

/** The level a route answers at (a route whose level is anonymous reads nothing owned). */
export function readerLevelOf(name: RouteName): ReaderLevel {
  return authorization[name].level === 'admin' ? 'admin' : 'function';
}

/** Values of a body field that perform an admin action: refused on this route, accepted on `adminRoute`. */
interface AdminOnlyBody {
  readonly field: string;
  readonly values: readonly string[];
  readonly adminRoute: string;
}

export interface RouteAuthorization {
  readonly level: AuthLevel;
  /**
   * The role the app requires of the caller (shared/identity/access.ts), checked in shared/http/route.ts
   * before the body is read: 403 naming the role; `owner` resources answer 404 to anyone else.
   */
  readonly role: RouteRole;
  /** Set where the body decides: what the route refuses to a function-level caller. */
  readonly adminOnly?: AdminOnlyBody;
  /** Why the level is what it is, where that is not obvious (shown in docs/security.md). */
  readonly note?: string;
}

/** Schedule targets whose run performs an admin action (a gate release is admin-only). */
const adminScheduleTargets = ['gateRelease'] as const;

/** Any identity with a role: shared, admin-made resources (sequences, counters, gates) everyone with a role uses. */
const fn = { level: 'function', role: 'caller' } as const;
const submitter = { level: 'function', role: 'submitter' } as const;
/** Worker of the processor the request names (its path, or the lease id): `workerOf` or the declaration's `workers`. */
const worker = { level: 'function', role: 'worker' } as const;
/** The resource's owner or an admin (jobs, schedules, gated runs): 404 to anyone else. */
const owner = { level: 'function', role: 'owner' } as const;
const admin = { level: 'admin', role: 'admin' } as const;
const anonymous = { level: 'anonymous', role: 'anonymous' } as const;

export const authorization = {
  health: anonymous,
  openApiDocument: anonymous,
  consolePage: { ...anonymous, note: 'The page holds no data; it asks for the admin key before it calls anything.' },
  consoleAsset: anonymous,
  apiDocsPage: {
    ...anonymous,
    note: 'The API reference shows only the public contract (the same as the OpenAPI document) and holds no data.',
  },
  apiDocsAsset: anonymous,

  sequencesConfigure: admin,
  sequencesList: admin,
  sequencesGet: fn,
  sequencesNext: fn,
  sequencesValidate: fn,

  countersConfigure: admin,
  countersList: admin,
  countersFigures: admin,
  countersGet: fn,
  countersIncrement: fn,

  gatesCreate: admin,
  gatesList: admin,
  gatesRelease: admin,
  gatesReset: admin,
  gatesAudit: admin,
  gatesGet: fn,
  gatesWait: fn,
  gatesEvents: fn,
  gatesStartRun: {
    ...submitter,
    note:
      'Every run action (none, enqueue, job) is something a function-level caller may do directly; the answer links to ' +
      'gatesRunStatus, never to Durable management URLs.',
  },
  gatesRunStatus: { ...owner, note: 'The run belongs to whoever started it; its job (`action.jobId`) too.' },

  schedulesCreate: {
    ...submitter,
    adminOnly: { field: 'target.type', values: adminScheduleTargets, adminRoute: 'schedulesCreatePrivileged' },
  },
  schedulesCreatePrivileged: { ...admin, note: 'Accepts every target, including those that perform admin actions.' },
  schedulesList: { ...admin, note: 'Lists the targets and payloads of every schedule.' },
  schedulesFigures: admin,
  schedulesGet: {
    ...owner,
    note:
      'Ownership: a schedule an admin created shows its target redacted and no failure reasons; no webhook answer is shown at ' +
      'this level.',
  },
  schedulesGetPrivileged: { ...admin, note: 'The whole schedule, whoever created it: target, payload, what targets answered.' },
  // Operator routes: in the keys modes the master key is `key:shared` on a function-level route (the
  // host does not say which key it matched), so what the console does with it stays admin-level.
  schedulesCancel: admin,
  schedulesPause: admin,
  schedulesResume: admin,
  schedulesTrigger: { ...admin, note: 'Runs the target now, whatever it is.' },

  jobsSubmit: { ...submitter, note: 'The job belongs to its submitter and counts against its open jobs.' },
  jobsList: { ...admin, note: "Every caller's jobs, for operators." },
  jobsFigures: { ...admin, note: 'Queue lengths are an operator figure; each call reads every work queue.' },
  jobsGet: owner,
  jobsResults: owner,
  jobsFailures: owner,
  jobsResultsPrivileged: { ...admin, note: "Any caller's job: operators (the console) read results here." },
  jobsFailuresPrivileged: admin,
  jobsFile: owner,
  jobsRetryFailed: admin,
  jobsCancel: { ...owner, note: 'A job id is no capability: only its owner (or an admin) may cancel it; anyone else gets 404.' },

  processorsDeclare: { ...admin, note: "A webhook processor's answer carries its signing secret." },
  processorsList: admin,
  processorsGet: admin,
  processorsRotateSecret: { ...admin, note: 'Answers the new signing secret.' },
  leasesTake: { ...worker, note: "A lease carries the processor's items, never their job's owner." },
  leasesExtend: worker,
  leasesComplete: { ...worker, note: 'The lease id is sealed and names only its own items: a completion cannot touch another lease.' },

  streamsAppend: { ...submitter, note: "A producer id belongs to the caller that first used it: another's is a producer of its own." },
  streamsGet: { ...fn, note: 'No blob names and no flush error text at this level.' },
  streamsGetPrivileged: { ...admin, note: "The writer's log blob names and its last flush error as they are." },
  streamsList: admin,
  streamsRemap: admin,
  streamsFlush: admin,

  callersIssue: { ...admin, note: 'Answers the credential, this once; the app keeps only its id.' },
  callersList: { ...admin, note: 'Names, roles and credential ids; never a credential.' },
  callersRevoke: admin,
  callersMe: {
    level: 'function',
    role: 'identified',
    note: 'Answers the asking identity only: its id, roles and what it holds.',
  },

  zzNotFound: {
    ...anonymous,
    note:
      'Answers only 404 for paths and methods no other route serves, and reveals nothing; it answers callers without a key ' +
      "exactly as those with one, as the host's own 404 did.",
  },
} as const satisfies Readonly<Record<string, RouteAuthorization>>;

/** The name of a route the table knows; `defineRoute` accepts no other. */
export type RouteName = keyof typeof authorization;

export function authorizationOf(name: RouteName): RouteAuthorization {
  return authorization[name];
}

/**
 * Refuses (403, nothing changed) a body value that the route's `adminOnly` rule reserves for its
 * admin-level twin; `adminEndpoint` is how a caller reaches that twin, e.g. `POST /api/schedules/privileged`.
 */
export function refuseAdminOnly(route: RouteName, value: string, adminEndpoint: string): void {
  const rule = authorizationOf(route).adminOnly;
  if (rule === undefined || !rule.values.includes(value)) return;
  throw new AppError('Forbidden', `"${value}" performs an admin action: send it with the admin key to ${adminEndpoint}`, {
    issues: [{ path: `body.${rule.field}`, message: `Needs the admin key (${adminEndpoint})` }],
    extra: { adminRoute: rule.adminRoute },
  });
}

/**
 * The level a route is registered with at the host, by identity mode (docs/security.md "Modes"): in
 * the keys modes the host's keys are the door, so the table's level; in `entra` mode callers carry
 * no key (the host refuses a bearer token as one: devhost/docs/real-host.md#what-the-worker-learns-about-the-caller),
 * so every route is anonymous to the host and the app checks each caller itself (shared/identity).
 */
export function hostAuthLevel(level: AuthLevel, mode: AuthMode): AuthLevel {
  return mode === 'entra' ? 'anonymous' : level;
}

export function routeNames(): RouteName[] {
  return Object.keys(authorization) as RouteName[];
}
