/**
 * `/api/callers`: an admin issues, lists and revokes named callers' credentials; `me` tells any
 * identity who the app takes it for (docs/security.md "Callers").
 */
import * as z from 'zod';

import { json } from '../http/responses';
import { defineRoute, type RouteDefinition } from '../http/route';
import { problem } from '../http/schemas';
import { formatRoles } from '../identity/caller';
import { callerNamePattern, callerNameRule } from '../names';
import type { CallerRegistry } from './registry';
import type { CallerRecord } from './store';

export interface CallerRouteDeps {
  /** Lazy, so the route list can be built without the app. */
  readonly registry: () => CallerRegistry;
  /** Unfinished jobs the caller holds of TALLYHO_JOBS_MAX_OPEN. */
  readonly openJobsOf: (callerId: string) => Promise<number>;
  /** Long polls and event streams this instance holds open for the caller (TALLYHO_HTTP_MAX_HELD). */
  readonly heldOf: (callerId: string) => number;
  readonly now: () => number;
}

const tags = ['operations'];
const unavailable = problem('Storage unavailable; retry after Retry-After');
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

const callerName = z
  .string()
  .regex(callerNamePattern, callerNameRule)
  .refine((name) => name !== 'me', '"me" names the caller asking (GET /api/callers/me)')
  .meta({ example: 'thumbnail-worker-1' });

const issueBody = z
  .strictObject({
    name: callerName,
    roles: z
      .array(z.string().max(80))
      .max(60)
      .meta({ description: '`admin`, `submitter`, `worker:*` (every processor) or `worker:<processor>`; none: a processor may name it' }),
    expiresInSeconds: z
      .number()
      .int()
      .min(60)
      .max(5 * 365 * 86_400)
      .optional()
      .meta({ description: 'Unset: valid until revoked (or TALLYHO_CREDENTIALS_KEY changes)' }),
  })
  .meta({ id: 'CallerIssue' });

const callerView = z
  .object({
    name: z.string(),
    id: z.string().meta({ description: 'The caller id: `cred:<name>` (what ownership and `workers` lists name)' }),
    roles: z.array(z.string()),
    state: z.enum(['active', 'expired', 'revoked']),
    credentialId: z.string().meta({ description: 'The credential id (`jti`): not a secret' }),
    issuedAt: z.string(),
    expiresAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    issuedBy: z.string(),
  })
  .meta({ id: 'Caller' });

const issuedView = callerView
  .extend({ credential: z.string().meta({ description: 'Shown this once: send it as `Authorization: Bearer <credential>`' }) })
  .meta({ id: 'CallerIssued' });

const meView = z
  .object({
    id: z.string(),
    kind: z.enum(['entra', 'appService', 'credential', 'masterKey', 'sharedKey', 'anonymous']),
    name: z.string().optional(),
    roles: z.array(z.string()),
    holds: z
      .object({
        openJobs: z.number().int().meta({ description: 'Unfinished jobs it holds of TALLYHO_JOBS_MAX_OPEN (across instances)' }),
        heldRequests: z.number().int().meta({ description: 'Long polls and event streams this instance holds open for it' }),
      })
      .meta({ description: 'What it holds of the pools where that is one cheap read (docs/security.md "Fair shares")' }),
  })
  .meta({ id: 'CallerSelf' });

const nameParams = z.strictObject({ name: callerName });

function viewCaller(c: CallerRecord, now: number) {
  const state = c.revokedAt !== null ? 'revoked' : c.expiresAt !== null && c.expiresAt <= now ? 'expired' : 'active';
  return {
    name: c.name,
    id: `cred:${c.name}`,
    roles: [...c.roles],
    state,
    credentialId: c.credentialId,
    issuedAt: new Date(c.issuedAt).toISOString(),
    expiresAt: iso(c.expiresAt),
    revokedAt: iso(c.revokedAt),
    issuedBy: c.issuedBy,
  } as const;
}

const noStore = { 'cache-control': 'no-store' };

function issueRoute(deps: CallerRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'callersIssue',
    method: 'POST',
    path: 'callers',
    summary: 'Issue a named caller a credential',
    description:
      'The credential is in this answer only; the app keeps its id and what it grants, never the credential. A name holds one ' +
      'credential at a time: revoke it (DELETE) before issuing the name another.',
    tags,
    body: issueBody,
    bodyRequired: true,
    examples: [
      { name: 'thumbs-1', roles: ['worker:thumbnails'] },
      { name: 'billing-app', roles: ['submitter'], expiresInSeconds: 90 * 86_400 },
    ],
    responses: {
      201: { description: 'Issued (the credential shown this once)', schema: issuedView },
      400: problem('Bad name, unknown role, or a bad expiry'),
      409: problem('The name holds a live credential, TALLYHO_CALLERS_MAX is reached, or TALLYHO_CREDENTIALS_KEY is not set'),
      503: unavailable,
    },
    handle: async ({ body, caller }) => {
      const issued = await deps.registry().issue(body, caller.id);
      const view = { ...viewCaller(issued.caller, issued.caller.issuedAt), credential: issued.credential };
      return json(201, view, { ...noStore, location: `/api/callers/${body.name}` });
    },
  });
}

function listRoute(deps: CallerRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'callersList',
    method: 'GET',
    path: 'callers',
    summary: 'The named callers: their roles and whether their credential is live (no secrets)',
    tags,
    responses: {
      200: { description: 'Every named caller, by name', schema: z.object({ callers: z.array(callerView) }) },
      503: unavailable,
    },
    handle: async () => {
      const now = deps.now();
      return json(200, { callers: (await deps.registry().list()).map((c) => viewCaller(c, now)) }, noStore);
    },
  });
}

function revokeRoute(deps: CallerRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'callersRevoke',
    method: 'DELETE',
    path: 'callers/{name}',
    summary: "Revoke a named caller's credential",
    description:
      'Refused (401) at once on the instance that answers, and on every instance within TALLYHO_CREDENTIALS_REVOCATION_CACHE_SECONDS ' +
      '(30 s). Revoking again answers the same.',
    tags,
    params: nameParams,
    responses: {
      200: { description: 'Revoked', schema: callerView },
      400: problem('Bad name'),
      404: problem('No caller of that name'),
      503: unavailable,
    },
    handle: async ({ params, caller }) => json(200, viewCaller(await deps.registry().revoke(params.name, caller.id), deps.now()), noStore),
  });
}

function meRoute(deps: CallerRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'callersMe',
    method: 'GET',
    path: 'callers/me',
    summary: 'Who the app takes the caller for: its id, kind, roles, and what it holds',
    tags,
    responses: { 200: { description: 'The caller', schema: meView }, 503: unavailable },
    handle: async ({ caller }) =>
      json(
        200,
        {
          id: caller.id,
          kind: caller.kind,
          ...(caller.name === undefined ? {} : { name: caller.name }),
          roles: formatRoles(caller.roles),
          holds: { openJobs: await deps.openJobsOf(caller.id), heldRequests: deps.heldOf(caller.id) },
        },
        noStore,
      ),
  });
}

export function callersRoutes(deps: CallerRouteDeps): RouteDefinition[] {
  return [issueRoute(deps), listRoute(deps), meRoute(deps), revokeRoute(deps)];
}
