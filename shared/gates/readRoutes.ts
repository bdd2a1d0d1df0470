/** The gates API's reads: the gate list, one gate's state and its audit log. */
import { pageBody, pageQuery } from '../http/paging';
import { json } from '../http/responses';
import { defineRoute, type RouteDefinition } from '../http/route';
import { auditPage } from './audit';
import { gateEtag, ifNoneMatchHits } from './etag';
import { badRequest, gateResult, type GateRouteDeps, notFound, tags, unavailable } from './routeCommon';
import { gateList, gateParams, gateView, viewOf } from './schemas';

export function gatesListRoute(deps: GateRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'gatesList',
    method: 'GET',
    path: 'gates',
    summary: 'List gates with their state and waiters (for operators)',
    description:
      'In name order, a page at a time, read from the gate rows (one per gate): each gate as it is now; a gate whose row cannot be ' +
      'read is listed under `unreadable`.',
    tags,
    query: pageQuery({}),
    responses: {
      200: { description: 'The gates', schema: gateList },
      400: badRequest,
      503: unavailable,
    },
    handle: async ({ query }) =>
      json(200, pageBody(await deps.gates().reader.list(query), viewOf, { unreadable: true }), { 'cache-control': 'no-store' }),
  });
}

export function gatesGetRoute(deps: GateRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'gatesGet',
    method: 'GET',
    path: 'gates/{name}',
    summary: "A gate's state: closed or released, generation, who released it and when, waiter counts",
    description: 'Answers with an ETag; send it back in If-None-Match to get 304 while nothing changed.',
    tags,
    params: gateParams,
    requestHeaders: [{ name: 'If-None-Match', description: 'The ETag of the state you have; 304 when it is still current.' }],
    responses: {
      200: { description: 'The gate', schema: gateView },
      304: { description: 'Unchanged since the ETag in If-None-Match' },
      400: badRequest,
      404: notFound,
      503: unavailable,
    },
    handle: async ({ params, headers }) => {
      const gate = await deps.gates().reader.describe(params.name);
      const etag = gateEtag(gate);
      if (ifNoneMatchHits(headers.get('if-none-match'), etag)) return { status: 304, headers: { etag, 'cache-control': 'no-cache' } };
      return gateResult(200, gate);
    },
  });
}

export function gatesAuditRoute(deps: GateRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'gatesAudit',
    method: 'GET',
    path: 'gates/{name}/audit',
    summary: "The gate's audit log: every create, release and reset with who, when, generation and how",
    description: 'Oldest first, a page at a time.',
    tags,
    params: gateParams,
    query: pageQuery({}),
    responses: {
      200: { description: 'One page', schema: auditPage },
      400: badRequest,
      503: unavailable,
    },
    handle: async ({ params, query }) =>
      json(
        200,
        pageBody(await deps.gates().audit.list(params.name, query), (r) => r, { unreadable: true }),
      ),
  });
}
