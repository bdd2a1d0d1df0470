/** The streams API's reads: the routed types, and one type's route and writer. */
import { readerLevelOf } from '../http/authorization';
import { pageBody, pageQuery } from '../http/paging';
import { json } from '../http/responses';
import { defineRoute, type RouteDefinition } from '../http/route';
import { badRequest, type StreamRouteDeps, tags, unavailable } from './routeCommon';
import { streamRouteList, streamView, typeParams } from './schemas';

export function streamsListRoute(deps: StreamRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'streamsList',
    method: 'GET',
    path: 'streams',
    summary: 'Event types and their routes (for operators)',
    description:
      "Every event type callers wrote to or an operator remapped (the types counted by TALLYHO_STREAMS_MAX_TYPES; the app's own are not), " +
      'in type order, a page at a time, each with its route. Read a type for its writer: buffer depth and flush lag.',
    tags,
    query: pageQuery({}),
    responses: { 200: { description: 'The types and their routes', schema: streamRouteList }, 400: badRequest, 503: unavailable },
    handle: async ({ query }) => {
      const page = await deps.service().routes(query);
      const view = (r: (typeof page.items)[number]) => ({
        type: r.type,
        partition: r.partition,
        resource: r.resource,
        version: r.version,
        source: r.source,
      });
      return json(200, pageBody(page, view, { unreadable: true }), { 'cache-control': 'no-store' });
    },
  });
}

const getTexts = {
  streamsGet: {
    summary: 'Where an event type goes and how its writer is doing',
    description:
      "The resolved partition and resource, the writer's buffer depth, last flush and flush lag (age of the oldest unflushed event). " +
      "At this level without the log's blob names or the text of a flush error: GET /api/streams/{type}/privileged has them (admin key).",
  },
  streamsGetPrivileged: {
    summary: "An event type's route and writer, with the log's blob names and the last flush error (for operators)",
    description: 'The same view as GET /api/streams/{type}, nothing left out.',
  },
} as const;

/** One type's view at the route's level (describeType says what a function-level reader does not get). */
function getRoute(name: keyof typeof getTexts, path: string, deps: StreamRouteDeps): RouteDefinition {
  const reader = readerLevelOf(name);
  return defineRoute({
    name,
    method: 'GET',
    path,
    ...getTexts[name],
    tags,
    durable: true,
    params: typeParams,
    responses: { 200: { description: 'The stream', schema: streamView }, 400: badRequest, 503: unavailable },
    handle: async ({ params, durable }) => json(200, await deps.service().describe(durable(), params.type, reader)),
  });
}

export function streamsGetRoutes(deps: StreamRouteDeps): RouteDefinition[] {
  return [getRoute('streamsGet', 'streams/{type}', deps), getRoute('streamsGetPrivileged', 'streams/{type}/privileged', deps)];
}
