/** The sequences HTTP API, defined once (registration, validation and OpenAPI all come from here). */
import { readIdempotencyKey } from '../http/idempotencyHeader';
import { defineRoute, type RouteDefinition } from '../http/route';
import { json } from '../http/responses';
import { pageBody, pageQuery } from '../http/paging';
import { idempotencyKeyHeader, problem } from '../http/schemas';
import { sequenceSettingsInput } from './definition';
import { nextBody, nextResult, sequenceList, sequenceParams, sequenceView, validateParams, validationResult } from './schemas';
import type { SequenceService } from './service';

export interface SequenceRouteDeps {
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without any I/O. */
  readonly service: () => SequenceService;
}

const tags = ['sequences'];
const badRequest = problem('Invalid name or body; nothing was changed');
const unavailable = problem('Storage unavailable or too much contention; retry after Retry-After. Nothing was lost');
const corrupt = problem('Stored state of the sequence is corrupt (CorruptState); needs an operator');

function sequencesConfigureRoute(deps: SequenceRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'sequencesConfigure',
    method: 'PUT',
    path: 'sequences/{name}',
    summary: 'Create a sequence, or confirm the settings of an existing one',
    description:
      'Creates the sequence with the given settings (omitted ones take their defaults) and answers 201. ' +
      'For an existing sequence, answers 200 when every given setting matches and 409 naming the differing ones otherwise: ' +
      'settings never change after creation, so numbers already issued stay valid.',
    tags,
    params: sequenceParams,
    body: sequenceSettingsInput.optional(),
    maxBodyBytes: 4096,
    examples: [{ prefix: 'ORD-', width: 7, checkDigit: true }, { start: 1000, blockSize: { min: 10, max: 10000 } }, {}],
    responses: {
      200: { description: 'The sequence exists with these settings', schema: sequenceView },
      201: { description: 'The sequence was created', schema: sequenceView },
      400: badRequest,
      409: problem('The sequence exists with different settings (see `differences`)'),
      413: problem('Body larger than 4 KiB'),
      500: corrupt,
      503: unavailable,
    },
    handle: async ({ params, body }) => {
      const { created, view } = await deps.service().configure(params.name, body ?? {});
      return json(created ? 201 : 200, view, created ? { location: `/api/sequences/${params.name}` } : {});
    },
  });
}

function sequencesNextRoute(deps: SequenceRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'sequencesNext',
    method: 'POST',
    path: 'sequences/{name}/next',
    summary: 'Take the next numbers of a sequence',
    description:
      'Returns `count` (default 1, at most 1000) numbers, consecutive within this instance and unique across all instances. ' +
      'With an Idempotency-Key, a retry returns the same numbers.',
    tags,
    params: sequenceParams,
    body: nextBody,
    maxBodyBytes: 1024,
    requestHeaders: [idempotencyKeyHeader],
    examples: [{ count: 3 }, {}],
    responses: {
      200: { description: 'The numbers, raw and formatted', schema: nextResult },
      400: badRequest,
      404: problem('No such sequence (and TALLYHO_SEQUENCES_AUTO_CREATE is off)'),
      409: problem(
        'The Idempotency-Key was first used with another count, the sequence is exhausted, or TALLYHO_SEQUENCES_MAX_AUTO_CREATED sequences are auto-created',
      ),
      413: problem('Body larger than 1 KiB'),
      429: problem('You auto-created your share (a quarter) of TALLYHO_SEQUENCES_MAX_AUTO_CREATED; nothing was created'),
      500: corrupt,
      503: unavailable,
    },
    handle: async ({ params, body, headers, caller }) => {
      const key = readIdempotencyKey(headers);
      return json(200, await deps.service().next(params.name, body?.count ?? 1, key, caller.id));
    },
  });
}

function sequencesGetRoute(deps: SequenceRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'sequencesGet',
    method: 'GET',
    path: 'sequences/{name}',
    summary: "A sequence's settings, high-water mark and this instance's block statistics",
    tags,
    params: sequenceParams,
    responses: {
      200: { description: 'The sequence', schema: sequenceView },
      400: badRequest,
      404: problem('No such sequence'),
      500: corrupt,
      503: unavailable,
    },
    handle: async ({ params }) => json(200, await deps.service().describe(params.name)),
  });
}

function sequencesListRoute(deps: SequenceRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'sequencesList',
    method: 'GET',
    path: 'sequences',
    summary: 'List sequences with their high-water marks (for operators)',
    description: 'In name order, a page at a time. Block statistics are those of the instance that answered.',
    tags,
    query: pageQuery({}),
    responses: {
      200: { description: 'The sequences', schema: sequenceList },
      400: badRequest,
      503: unavailable,
    },
    handle: async ({ query }) =>
      json(
        200,
        pageBody(await deps.service().list(query), (s) => s, { unreadable: true }),
        { 'cache-control': 'no-store' },
      ),
  });
}

function sequencesValidateRoute(deps: SequenceRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'sequencesValidate',
    method: 'GET',
    path: 'sequences/{name}/validate/{formatted}',
    summary: 'Check a typed-in number: prefix, digits and check digit',
    description:
      'Answers 200 with `valid: false` and a reason for anything that is not a well-formed number of this sequence; ' +
      'only input that is unsafe to process (control characters, over 100 characters) is a 400.',
    tags,
    params: validateParams,
    responses: {
      200: { description: 'Whether the number is well formed', schema: validationResult },
      400: badRequest,
      404: problem('No such sequence'),
      500: corrupt,
      503: unavailable,
    },
    handle: async ({ params }) => json(200, await deps.service().validate(params.name, params.formatted)),
  });
}

export function sequencesRoutes(deps: SequenceRouteDeps): RouteDefinition[] {
  return [
    sequencesConfigureRoute(deps),
    sequencesNextRoute(deps),
    sequencesGetRoute(deps),
    sequencesListRoute(deps),
    sequencesValidateRoute(deps),
  ];
}
