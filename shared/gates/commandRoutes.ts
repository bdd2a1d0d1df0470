/**
 * The gates API's admin commands: create, release and reset a gate. Each answers once the change is
 * written (so never 202: there is nothing left to follow); what follows it (publishing, actions, a schedule) may start an orchestration, so they
 * take the invocation's Durable client.
 */
import { AppError } from '../errors';
import { json } from '../http/responses';
import type { HeaderReader, ResponseDoc, RouteDefinition } from '../http/route';
import { defineRoute } from '../http/route';
import { problem } from '../http/schemas';
import { gateEtag } from './etag';
import { badRequest, gateResult, type GateRouteDeps, notFound, tags, unavailable } from './routeCommon';
import { createBody, gateParams, gateView, releaseBody, releaseResult, resetBody, resetResult, viewOf } from './schemas';
import type { Actor } from './operations';

/** The answers of an admin command on an existing gate (release, reset). */
function commandResponses(ok: ResponseDoc): Record<number, ResponseDoc> {
  return { 200: ok, 400: badRequest, 404: notFound, 503: unavailable };
}

/** App Service authentication's principal header; clients cannot set it when authentication is on. */
const principalHeader = 'x-ms-client-principal-name';

function actorOf(headers: HeaderReader, body: { by?: string | undefined; note?: string | undefined } | undefined): Actor {
  const principal = headers.get(principalHeader)?.trim();
  const by = principal !== undefined && principal !== '' ? principal.slice(0, 128) : (body?.by ?? 'admin');
  return { by, ...(body?.note === undefined ? {} : { note: body.note }) };
}

export function gatesCreateRoute(deps: GateRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'gatesCreate',
    method: 'PUT',
    path: 'gates/{name}',
    summary: 'Create a closed gate, optionally with a scheduled release',
    description:
      'Creates the gate closed, generation 1 (201). Repeating the PUT answers 200 with the gate as it is; a `releaseAt` ' +
      "different from the current generation's answers 409 (reset the gate with a `releaseAt` to reschedule).",
    tags,
    durable: true,
    params: gateParams,
    body: createBody,
    maxBodyBytes: 4096,
    examples: [{}, { releaseAt: '2026-03-29T09:00:00Z', by: 'ops', note: 'launch' }],
    responses: {
      200: { description: 'The gate exists', schema: gateView },
      201: { description: 'The gate was created', schema: gateView },
      400: badRequest,
      409: problem('The gate exists with another releaseAt'),
      503: unavailable,
    },
    handle: async ({ params, body, headers, durable }) => {
      const result = await deps.gates().commands(durable()).create(params.name, body?.releaseAt, actorOf(headers, body));
      return gateResult(result.created ? 201 : 200, result.gate, result.created ? { location: `/api/gates/${params.name}` } : {});
    },
  });
}

export function gatesReleaseRoute(deps: GateRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'gatesRelease',
    method: 'POST',
    path: 'gates/{name}/release',
    summary: 'Release the gate: every waiting run proceeds, and so does every run that registers later',
    description:
      'Idempotent: releasing a released gate answers the first release (who and when) with outcome `alreadyReleased`. ' +
      'Concurrent calls release once. Each release is audited and, with Service Bus configured, published to the gate-events topic.',
    tags,
    durable: true,
    params: gateParams,
    body: releaseBody,
    maxBodyBytes: 4096,
    examples: [{}, { by: 'alice', note: 'go' }],
    responses: commandResponses({ description: 'Released (by this call or an earlier one)', schema: releaseResult }),
    handle: async ({ params, body, headers, durable }) => {
      const result = await deps.gates().commands(durable()).release(params.name, actorOf(headers, body));
      if (result.outcome === 'superseded') throw new AppError('Internal', 'A release of the current generation was superseded');
      return json(200, { outcome: result.outcome, gate: viewOf(result.gate) }, { etag: gateEtag(result.gate) });
    },
  });
}

export function gatesResetRoute(deps: GateRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'gatesReset',
    method: 'POST',
    path: 'gates/{name}/reset',
    summary: 'Close the gate again for reuse, as a new generation',
    description:
      'The gate becomes closed with generation + 1; a release of the old generation can no longer affect it. Runs still ' +
      'waiting on a closed gate move into the new generation. A pending scheduled release is cancelled; give `releaseAt` ' +
      'to schedule the new generation. Concurrent resets of the same generation make one new generation.',
    tags,
    durable: true,
    params: gateParams,
    body: resetBody,
    maxBodyBytes: 4096,
    examples: [{}, { releaseAt: '2026-03-29T09:00:00Z' }],
    responses: commandResponses({ description: 'Reset (by this call or a concurrent one)', schema: resetResult }),
    handle: async ({ params, body, headers, durable }) => {
      const result = await deps.gates().commands(durable()).reset(params.name, body?.releaseAt, actorOf(headers, body));
      return json(200, { outcome: result.outcome, gate: viewOf(result.gate), carried: result.carried }, { etag: gateEtag(result.gate) });
    },
  });
}
