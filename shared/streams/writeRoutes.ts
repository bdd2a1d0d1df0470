/** The streams API's writes: append events, remap a type, flush a writer (each through the single writer entity). */
import { acceptedResponse, acceptedResult } from '../http/operation';
import { type HttpResult, json } from '../http/responses';
import { defineRoute, type RouteDefinition } from '../http/route';
import { problem } from '../http/schemas';
import { badRequest, type StreamRouteDeps, tags, unavailable } from './routeCommon';
import {
  appendAccepted,
  appendBody,
  appendQuery,
  appendResult,
  flushAccepted,
  flushResult,
  remapAccepted,
  remapBody,
  remapResult,
  typeParams,
} from './schemas';

/** A writer flushes every TALLYHO_STREAMS_FLUSH_INTERVAL_MS (a second by default): a read a second later tells. */
const streamPollSeconds = 1;

/** 200 when the write is done, else 202 pointing at the type's view, which shows the writer's flushes and route. */
function doneOrAccepted(done: boolean, type: string, body: object): HttpResult {
  return done ? json(200, body) : acceptedResult(body, `/api/streams/${encodeURIComponent(type)}`, streamPollSeconds);
}

export function streamsAppendRoute(deps: StreamRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'streamsAppend',
    method: 'POST',
    path: 'streams/{type}/events',
    summary: 'Append events to the log of an event type',
    description:
      'One event or `{ "events": [...] }`. Each event carries its `producer` and a per-producer increasing `seq`; an event whose seq is not ' +
      'above the last one accepted from that producer is a duplicate and is ignored, so a retry never writes twice. The request is ' +
      "accepted whole or not at all. `ack=buffered` (default) answers 202 once the events are in the single writer's durable state; " +
      '`ack=flushed` answers 200 once they are in the log blob. A full buffer answers 429 with Retry-After, or waits with `wait=true`.',
    tags,
    durable: true,
    params: typeParams,
    query: appendQuery,
    body: appendBody,
    bodyRequired: true,
    examples: [
      { producer: 'checkout-7', seq: 42, data: { order: 'ORD-0012345-9', total: 129.5 } },
      {
        events: [
          { producer: 'checkout-7', seq: 43, data: { order: 'ORD-0012346-8' } },
          { producer: 'checkout-7', seq: 44 },
        ],
      },
    ],
    responses: {
      200: { description: 'ack=flushed: every event is in the log blob', schema: appendResult },
      202: acceptedResponse("ack=buffered: every event is in the writer's durable state; `statusUri` shows its flushes", appendAccepted),
      400: badRequest,
      403: problem("The app's own stream (the billing ledger, TALLYHO_BILLING_LEDGER_STREAM): only the app appends to it"),
      409: problem('A new event type past TALLYHO_STREAMS_MAX_TYPES; nothing was created'),
      413: problem('Body too large'),
      429: problem(
        "The writer's buffer is full (retry after Retry-After, or use wait=true), or it remembers as many producers as it may: in all (TALLYHO_STREAMS_MAX_PRODUCERS) or of this caller (TALLYHO_STREAMS_MAX_PRODUCERS_PER_CALLER)",
      ),
      503: unavailable,
    },
    handle: async ({ params, query, body, durable, caller }) => {
      // The producer quota counts per identity (shared/identity), never per key text presented.
      const result = await deps.service().appendEvents(durable(), params.type, body.events, {
        ack: query.ack,
        wait: query.wait,
        caller: caller.id,
      });
      return doneOrAccepted(query.ack === 'flushed', params.type, result);
    },
  });
}

export function streamsRemapRoute(deps: StreamRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'streamsRemap',
    method: 'PUT',
    path: 'streams/{type}/route',
    summary: 'Move an event type to another partition and/or resource',
    description:
      "Writes the new route, then the old writer refuses the type, flushes everything it accepted and hands the producers' sequence " +
      'marks to the new writer, which only then accepts the type: nothing is lost, duplicated or reordered per producer. Answers 200 ' +
      'once the new writer owns the type, 202 when the handoff is still under way (repeat the PUT to check or to re-drive it). ' +
      'Other instances may send to the old writer until their cached route expires (TALLYHO_STREAMS_ROUTE_CACHE_SECONDS); the old ' +
      'writer refuses and they re-resolve.',
    tags,
    durable: true,
    params: typeParams,
    body: remapBody,
    bodyRequired: true,
    maxBodyBytes: 1024,
    examples: [
      { partition: 'p07', resource: 'orders-2026' },
      { partition: 'p07' },
      { resource: 'orders-2026' },
      { partition: 'p01', resource: 'orders' },
    ],
    responses: {
      200: { description: 'The new writer owns the type', schema: remapResult },
      202: acceptedResponse('Route written; the handoff is still under way (`statusUri` shows the route)', remapAccepted),
      400: badRequest,
      409: problem('The route was changed concurrently; read it and try again'),
      503: unavailable,
    },
    handle: async ({ params, body, durable }) => {
      const result = await deps.service().remap(durable(), params.type, body);
      return doneOrAccepted(result.switched, params.type, result);
    },
  });
}

export function streamsFlushRoute(deps: StreamRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'streamsFlush',
    method: 'POST',
    path: 'streams/{type}/flush',
    summary: 'Flush the writer of an event type now',
    description:
      'Writes everything the writer accepted so far without waiting for N events or T. 200 once it is in the log, 202 if not yet.',
    tags,
    durable: true,
    params: typeParams,
    responses: {
      200: { description: 'Everything accepted before the request is in the log', schema: flushResult },
      202: acceptedResponse('The flush is requested but not finished yet (`statusUri` shows the flushes)', flushAccepted),
      400: badRequest,
      503: unavailable,
    },
    handle: async ({ params, durable }) => {
      const result = await deps.service().flush(durable(), params.type);
      return doneOrAccepted(result.flushed, params.type, result);
    },
  });
}
