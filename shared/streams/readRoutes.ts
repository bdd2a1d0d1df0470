/** The streams API's reads: the routed types, and one type's route and writer. */
import { listQuery } from '../http/listing';
import { json } from '../http/responses';
import { defineRoute, type RouteDefinition } from '../http/route';
import { badRequest, type StreamRouteDeps, tags, unavailable } from './routeCommon';
import { streamRouteList, streamView, typeParams } from './schemas';

export function streamsListRoute(deps: StreamRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'streamsList',
    method: 'GET',
    path: 'streams',
    summary: 'Event types with a route of their own (for operators)',
    description: 'The remapped types, from the route table (one scan). Read a type for its writer: buffer depth and flush lag.',
    tags,
    durable: true,
    query: listQuery,
    responses: { 200: { description: 'The routed types', schema: streamRouteList }, 400: badRequest, 503: unavailable },
    handle: async ({ query }) => {
      const listing = await deps.service().routes(query.limit);
      const items = listing.items.map((r) => ({
        type: r.type,
        partition: r.partition,
        resource: r.resource,
        version: r.version,
        source: r.source,
      }));
      return json(200, { ...listing, items }, { 'cache-control': 'no-store' });
    },
  });
}

export function streamsGetRoute(deps: StreamRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'streamsGet',
    method: 'GET',
    path: 'streams/{type}',
    summary: 'Where an event type goes and how its writer is doing',
    description:
      "The resolved partition and resource, the writer's buffer depth, last flush and flush lag (age of the oldest unflushed event).",
    tags,
    durable: true,
    params: typeParams,
    responses: { 200: { description: 'The stream', schema: streamView }, 400: badRequest, 503: unavailable },
    handle: async ({ params, durable }) => json(200, await deps.service().describe(durable(), params.type)),
  });
}
