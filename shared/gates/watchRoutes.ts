/**
 * The gates API's waiting: long poll and server-sent events, both read through the instance's watch
 * hub (one read of the gate row per gate per interval, however many wait). No Durable client: the
 * gate is a table row.
 */
import { validationError } from '../errors';
import { json } from '../http/responses';
import { defineRoute, type RouteDefinition } from '../http/route';
import { badRequest, type GateRouteDeps, notFound, tags, unavailable } from './routeCommon';
import { gateParams, viewOf, waitQuery, waitResult } from './schemas';
import { gateEventStream, waitForRelease } from './waiting';

export function gatesWaitRoute(deps: GateRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'gatesWait',
    method: 'GET',
    path: 'gates/{name}/wait',
    holds: true,
    summary: 'Long-poll: answers at once when released, else at the release or at the timeout',
    description:
      'Reads the state first, so a released gate answers immediately. `released: false, timedOut: true` means ask again. ' +
      "With `generation`, waits for that generation's release (answers at once when the gate has moved past it). " +
      'A caller holds at most a quarter of TALLYHO_HTTP_MAX_HELD open requests per instance: beyond it, or on a full instance, ' +
      "the largest holder's oldest wait answers early, as at its timeout.",
    tags,
    params: gateParams,
    query: waitQuery,
    responses: {
      200: { description: 'Released, or the state at the timeout', schema: waitResult },
      400: badRequest,
      404: notFound,
      503: unavailable,
    },
    handle: async ({ params, query, clientGone }) => {
      const waiting = deps.gates().waiting;
      const max = waiting.settings.waitMaxSeconds;
      if (query.timeout !== undefined && query.timeout > max) {
        throw validationError('The timeout is too long', [{ path: 'query.timeout', message: `At most ${max} seconds` }]);
      }
      const outcome = await waitForRelease(waiting, params.name, query.timeout ?? Math.min(30, max), query.generation, clientGone);
      const headers: Record<string, string> = { 'cache-control': 'no-store' };
      if (outcome.etag !== undefined) headers.etag = outcome.etag;
      return json(200, { released: outcome.released, timedOut: outcome.timedOut, gate: viewOf(outcome.gate) }, headers);
    },
  });
}

export function gatesEventsRoute(deps: GateRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'gatesEvents',
    method: 'GET',
    path: 'gates/{name}/events',
    holds: true,
    summary: 'Server-sent events: the current state first, then every change (the release as a `released` event)',
    description:
      'Events: `state` (closed, or a change such as a reset) and `released`, each with the gate as JSON and its ETag as the id; ' +
      '`: heartbeat` comments every TALLYHO_GATES_HEARTBEAT_SECONDS; a `retry:` hint. The stream ends right after a release ' +
      'it delivers, and after TALLYHO_GATES_SSE_MAX_SECONDS; a client that follows the gate further reconnects and gets the full state again. ' +
      'It also ends early when a fairer share of TALLYHO_HTTP_MAX_HELD (a quarter per caller, per instance) takes its place.',
    tags,
    params: gateParams,
    responses: {
      200: { description: 'An event stream', contentType: 'text/event-stream' },
      400: badRequest,
      404: notFound,
      503: unavailable,
    },
    handle: async ({ params, clientGone }) => {
      const body = await gateEventStream(deps.gates().waiting, params.name, clientGone);
      return {
        status: 200,
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
        body,
      };
    },
  });
}
