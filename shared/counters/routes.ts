/** The counters HTTP API, defined once (registration, validation and OpenAPI all come from here). */
import { readIdempotencyKey } from '../http/idempotencyHeader';
import { acceptedResponse, acceptedResult } from '../http/operation';
import { json } from '../http/responses';
import { defineRoute, type RouteDefinition } from '../http/route';
import { pageBody, pageQuery } from '../http/paging';
import { idempotencyKeyHeader, problem } from '../http/schemas';
import type { StoredCounter } from './catalog';
import {
  counterFigures,
  counterList,
  counterParams,
  counterSettingsInput,
  counterValue,
  counterView,
  incrementBody,
  incrementResult,
  readQuery,
} from './schemas';
import type { CounterService } from './service';

export interface CounterRouteDeps {
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without any I/O. */
  readonly service: () => CounterService;
}

const tags = ['counters'];
const badRequest = problem('Invalid name, body or header; nothing was changed');
const unavailable = problem('Storage unavailable or too much contention; retry after Retry-After');
const corrupt = problem('Stored state of the counter is corrupt (CorruptState); needs an operator');

function view(counter: StoredCounter) {
  return { name: counter.name, ...counter.definition, createdAt: counter.createdAt, updatedAt: counter.updatedAt };
}

function countersFiguresRoute(deps: CounterRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'countersFigures',
    method: 'GET',
    path: 'figures/counters',
    summary: 'How far the rollup is behind (for operators)',
    description:
      "Reads the counters' dirty index now (one query, at most 1,000 rows, oldest first): the rollup lag the " +
      'tallyho.counter.rollup.lag gauge reports, the same whichever instance answers, and the counters with hits not folded yet.',
    tags,
    responses: { 200: { description: 'The figures', schema: counterFigures }, 503: unavailable },
    handle: async () => json(200, await deps.service().figures(), { 'cache-control': 'no-store' }),
  });
}

function countersConfigureRoute(deps: CounterRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'countersConfigure',
    method: 'PUT',
    path: 'counters/{name}',
    summary: 'Create a counter or change its settings',
    description:
      'Creates the counter (201) or replaces its settings (200; omitted ones take their defaults). Repeating a PUT changes nothing. ' +
      'Once the counter holds data its `mode` and `partitions` are fixed: changing them answers 409. The safety window may always change.',
    tags,
    params: counterParams,
    body: counterSettingsInput,
    bodyRequired: true,
    maxBodyBytes: 4096,
    examples: [{ mode: 'hits', partitions: 8, safetyWindowSeconds: 60 }, { mode: 'sharded', partitions: 16 }, {}],
    responses: {
      200: { description: 'The counter exists with these settings', schema: counterView },
      201: { description: 'The counter was created', schema: counterView },
      400: badRequest,
      409: problem('The counter holds data and the PUT changes its mode or partitions (see `fields`)'),
      413: problem('Body larger than 4 KiB'),
      500: corrupt,
      503: unavailable,
    },
    handle: async ({ params, body }) => {
      const { outcome, counter } = await deps.service().configure(params.name, body);
      const created = outcome === 'created';
      return json(created ? 201 : 200, view(counter), created ? { location: `/api/counters/${params.name}` } : {});
    },
  });
}

function countersIncrementRoute(deps: CounterRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'countersIncrement',
    method: 'POST',
    path: 'counters/{name}/increment',
    summary: 'Add to a counter',
    description:
      'Adds `by` (default 1; negative for adjustments) and answers 202 once the increment is stored; reads include it at once. ' +
      'With an Idempotency-Key a retry is counted once (the answer then carries `Idempotent-Replayed: true`); ' +
      'reusing a key with a different `by` is a 409.',
    tags,
    params: counterParams,
    body: incrementBody,
    maxBodyBytes: 1024,
    requestHeaders: [idempotencyKeyHeader],
    examples: [{ by: 1 }, { by: -3 }, {}],
    responses: {
      202: acceptedResponse('The increment is stored; `statusUri` is the counter', incrementResult),
      400: badRequest,
      404: problem('No such counter (and TALLYHO_COUNTERS_AUTO_CREATE is off)'),
      409: problem('The Idempotency-Key was first used with another `by`, or TALLYHO_COUNTERS_MAX_AUTO_CREATED counters are auto-created'),
      413: problem('Body larger than 1 KiB'),
      429: problem('You auto-created your share (a quarter) of TALLYHO_COUNTERS_MAX_AUTO_CREATED; nothing was created'),
      500: corrupt,
      503: unavailable,
    },
    handle: async ({ params, body, headers, caller }) => {
      const key = readIdempotencyKey(headers);
      const result = await deps.service().increment(params.name, body?.by ?? 1, key, caller.id);
      // The read includes the increment at once; a poller has nothing to wait for, so one second is plenty.
      return acceptedResult(
        { name: result.name, by: result.by },
        `/api/counters/${encodeURIComponent(result.name)}`,
        1,
        result.replayed ? { 'idempotent-replayed': 'true' } : {},
      );
    },
  });
}

function countersGetRoute(deps: CounterRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'countersGet',
    method: 'GET',
    path: 'counters/{name}',
    summary: "A counter's value: rolled-up totals plus the hits not folded yet",
    description:
      'Exact for every increment acknowledged so far, except hits whose writer clock lagged by more than the safety window, ' +
      'which show after the next rollup. `?consistent=true` counts those too, at twice the storage requests.',
    tags,
    params: counterParams,
    query: readQuery,
    responses: {
      200: { description: 'The value', schema: counterValue },
      400: badRequest,
      404: problem('No such counter'),
      500: corrupt,
      503: unavailable,
    },
    handle: async ({ params, query }) =>
      json(200, await deps.service().read(params.name, query.consistent), { 'cache-control': 'no-store' }),
  });
}

function countersListRoute(deps: CounterRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'countersList',
    method: 'GET',
    path: 'counters',
    summary: 'List counters with their settings (for operators)',
    description: 'In name order, a page at a time. Read a counter for its value.',
    tags,
    query: pageQuery({}),
    responses: {
      200: { description: 'The counters', schema: counterList },
      400: badRequest,
      500: problem('Unexpected failure; a counter whose settings are corrupt is listed under `unreadable` instead'),
      503: unavailable,
    },
    handle: async ({ query }) =>
      json(200, pageBody(await deps.service().list(query), view, { unreadable: true }), { 'cache-control': 'no-store' }),
  });
}

export function countersRoutes(deps: CounterRouteDeps): RouteDefinition[] {
  return [
    countersConfigureRoute(deps),
    countersIncrementRoute(deps),
    countersGetRoute(deps),
    countersListRoute(deps),
    countersFiguresRoute(deps),
  ];
}
