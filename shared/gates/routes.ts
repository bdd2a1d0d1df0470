/** The gates HTTP API, defined once (registration, validation and OpenAPI all come from here). */
import { AppError, validationError } from '../errors';
import { listQuery } from '../http/listing';
import type { HeaderReader, HttpResult, ResponseDoc, RouteDefinition } from '../http/route';
import { defineRoute } from '../http/route';
import { json } from '../http/responses';
import { problem } from '../http/schemas';
import { exampleTransaction } from '../jobs/schemas';
import type { GateAuditLog } from './audit';
import { auditRecordSchema } from './audit';
import { gateEtag, ifNoneMatchHits } from './etag';
import type { GateSnapshot } from './operations';
import {
  accepted,
  auditQuery,
  createBody,
  gateList,
  gateParams,
  gateView,
  releaseBody,
  releaseResult,
  resetBody,
  resetResult,
  runBody,
  runParams,
  runStarted,
  runState,
  runStatusPath,
  viewOf,
  waitQuery,
  waitResult,
} from './schemas';
import type { Actor, GateService } from './service';
import { gateEventStream, waitForRelease, type WaitingDeps } from './waiting';

export interface GateRouteDeps {
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without any I/O. */
  readonly service: () => GateService;
  readonly waiting: () => WaitingDeps;
  readonly audit: () => GateAuditLog;
}

const tags = ['gates'];
const badRequest = problem('Invalid name, query or body; nothing was changed');
const notFound = problem('No such gate');
const unavailable = problem('Storage or the Durable task hub is unavailable; retry after Retry-After');
/** Documented as before; the change is now written before the call answers, so it is not sent. */
const stillRunning = {
  description: 'Not answered within TALLYHO_GATES_COMMAND_WAIT_MS; it goes on: follow `statusQueryGetUri`',
  schema: accepted,
};

/** The answers of an admin command on an existing gate (release, reset). */
function commandResponses(ok: ResponseDoc): Record<number, ResponseDoc> {
  return { 200: ok, 202: stillRunning, 400: badRequest, 404: notFound, 503: unavailable };
}

/** App Service authentication's principal header; clients cannot set it when authentication is on. */
const principalHeader = 'x-ms-client-principal-name';

function actorOf(headers: HeaderReader, body: { by?: string | undefined; note?: string | undefined } | undefined): Actor {
  const principal = headers.get(principalHeader)?.trim();
  const by = principal !== undefined && principal !== '' ? principal.slice(0, 128) : (body?.by ?? 'admin');
  return { by, ...(body?.note === undefined ? {} : { note: body.note }) };
}

function gateResult(status: number, gate: GateSnapshot, extra: Readonly<Record<string, string>> = {}): HttpResult {
  return json(status, viewOf(gate), { etag: gateEtag(gate), 'cache-control': 'no-cache', ...extra });
}

export function gatesRoutes(deps: GateRouteDeps): RouteDefinition[] {
  return [
    defineRoute({
      name: 'gatesCreate',
      method: 'PUT',
      path: 'gates/{name}',
      summary: 'Create a closed gate, optionally with a scheduled release',
      description:
        'Creates the gate closed, generation 1 (201). Repeating the PUT answers 200 with the gate as it is; a `releaseAt` ' +
        "different from the current generation's answers 409 (reset the gate with a `releaseAt` to reschedule).",
      tags,
      params: gateParams,
      body: createBody,
      maxBodyBytes: 4096,
      examples: [{}, { releaseAt: '2026-03-29T09:00:00Z', by: 'ops', note: 'launch' }],
      responses: {
        200: { description: 'The gate exists', schema: gateView },
        201: { description: 'The gate was created', schema: gateView },
        202: stillRunning,
        400: badRequest,
        409: problem('The gate exists with another releaseAt'),
        503: unavailable,
      },
      handle: async ({ params, body, headers }) => {
        const result = await deps.service().create(params.name, body?.releaseAt, actorOf(headers, body));
        return gateResult(result.created ? 201 : 200, result.gate, result.created ? { location: `/api/gates/${params.name}` } : {});
      },
    }),
    defineRoute({
      name: 'gatesList',
      method: 'GET',
      path: 'gates',
      summary: 'List gates with their state and waiters (for operators)',
      description: 'One table scan: each gate as it is now; a gate whose row cannot be read is listed under `unreadable`.',
      tags,
      query: listQuery,
      responses: {
        200: { description: 'The gates', schema: gateList },
        400: badRequest,
        503: unavailable,
      },
      handle: async ({ query }) => {
        const gates = await deps.service().list(query.limit);
        return json(
          200,
          { items: gates.items.map(viewOf), unreadable: gates.unreadable, truncated: gates.truncated },
          { 'cache-control': 'no-store' },
        );
      },
    }),
    defineRoute({
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
        const gate = await deps.service().describe(params.name);
        const etag = gateEtag(gate);
        if (ifNoneMatchHits(headers.get('if-none-match'), etag)) return { status: 304, headers: { etag, 'cache-control': 'no-cache' } };
        return gateResult(200, gate);
      },
    }),
    defineRoute({
      name: 'gatesRelease',
      method: 'POST',
      path: 'gates/{name}/release',
      summary: 'Release the gate: every waiting run proceeds, and so does every run that registers later',
      description:
        'Idempotent: releasing a released gate answers the first release (who and when) with outcome `alreadyReleased`. ' +
        'Concurrent calls release once. Each release is audited and, with Service Bus configured, published to the gate-events topic.',
      tags,
      params: gateParams,
      body: releaseBody,
      maxBodyBytes: 4096,
      examples: [{}, { by: 'alice', note: 'go' }],
      responses: commandResponses({ description: 'Released (by this call or an earlier one)', schema: releaseResult }),
      handle: async ({ params, body, headers }) => {
        const result = await deps.service().release(params.name, actorOf(headers, body));
        if (result.outcome === 'superseded') throw new AppError('Internal', 'A release of the current generation was superseded');
        return json(200, { outcome: result.outcome, gate: viewOf(result.gate) }, { etag: gateEtag(result.gate) });
      },
    }),
    defineRoute({
      name: 'gatesReset',
      method: 'POST',
      path: 'gates/{name}/reset',
      summary: 'Close the gate again for reuse, as a new generation',
      description:
        'The gate becomes closed with generation + 1; a release of the old generation can no longer affect it. Runs still ' +
        'waiting on a closed gate move into the new generation. A pending scheduled release is cancelled; give `releaseAt` ' +
        'to schedule the new generation. Concurrent resets of the same generation make one new generation.',
      tags,
      params: gateParams,
      body: resetBody,
      maxBodyBytes: 4096,
      examples: [{}, { releaseAt: '2026-03-29T09:00:00Z' }],
      responses: commandResponses({ description: 'Reset (by this call or a concurrent one)', schema: resetResult }),
      handle: async ({ params, body, headers }) => {
        const result = await deps.service().reset(params.name, body?.releaseAt, actorOf(headers, body));
        return json(200, { outcome: result.outcome, gate: viewOf(result.gate), carried: result.carried }, { etag: gateEtag(result.gate) });
      },
    }),
    defineRoute({
      name: 'gatesWait',
      method: 'GET',
      path: 'gates/{name}/wait',
      summary: 'Long-poll: answers at once when released, else at the release or at the timeout',
      description:
        'Reads the state first, so a released gate answers immediately. `released: false, timedOut: true` means ask again. ' +
        "With `generation`, waits for that generation's release (answers at once when the gate has moved past it).",
      tags,
      params: gateParams,
      query: waitQuery,
      responses: {
        200: { description: 'Released, or the state at the timeout', schema: waitResult },
        400: badRequest,
        404: notFound,
        503: unavailable,
      },
      handle: async ({ params, query }) => {
        const waiting = deps.waiting();
        const max = waiting.settings.waitMaxSeconds;
        if (query.timeout !== undefined && query.timeout > max) {
          throw validationError('The timeout is too long', [{ path: 'query.timeout', message: `At most ${max} seconds` }]);
        }
        const outcome = await waitForRelease(waiting, params.name, query.timeout ?? Math.min(30, max), query.generation);
        const headers: Record<string, string> = { 'cache-control': 'no-store' };
        if (outcome.etag !== undefined) headers.etag = outcome.etag;
        return json(200, { released: outcome.released, timedOut: outcome.timedOut, gate: viewOf(outcome.gate) }, headers);
      },
    }),
    defineRoute({
      name: 'gatesEvents',
      method: 'GET',
      path: 'gates/{name}/events',
      summary: 'Server-sent events: the current state first, then every change (the release as a `released` event)',
      description:
        'Events: `state` (closed, or a change such as a reset) and `released`, each with the gate as JSON and its ETag as the id; ' +
        '`: heartbeat` comments every TALLYHO_GATES_HEARTBEAT_SECONDS; a `retry:` hint. The stream ends right after a release ' +
        'it delivers, and after TALLYHO_GATES_SSE_MAX_SECONDS; a client that follows the gate further reconnects and gets the full state again.',
      tags,
      params: gateParams,
      responses: {
        200: { description: 'An event stream', contentType: 'text/event-stream' },
        400: badRequest,
        404: notFound,
        503: unavailable,
      },
      handle: async ({ params }) => {
        const body = await gateEventStream(deps.waiting(), params.name);
        return {
          status: 200,
          headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
          body,
        };
      },
    }),
    defineRoute({
      name: 'gatesStartRun',
      method: 'POST',
      path: 'gates/{name}/runs',
      summary: 'Start a gated durable run: it waits for the release, then performs its action',
      description:
        "Answers 202 with the run id and `statusUri` (also the Location), the run's own status route. A run that registers " +
        'after the release proceeds at once. With `runId`, a repeated start with the same action returns the first run ' +
        '(`created: false`); another action is a 409. A generation holds at most TALLYHO_GATES_MAX_WAITERS waiting runs: ' +
        'a start beyond that is a 429 (start it after the release).',
      tags,
      params: gateParams,
      body: runBody,
      maxBodyBytes: 48 * 1024,
      examples: [
        {},
        { action: { type: 'none' } },
        { runId: 'worker-17', action: { type: 'enqueue', payload: { shard: 17 } } },
        {
          runId: 'month-end',
          action: {
            type: 'job',
            processor: 'billing',
            items: [exampleTransaction],
          },
        },
      ],
      responses: {
        202: { description: 'The run is started (or was already)', schema: runStarted },
        400: badRequest,
        404: notFound,
        409: problem('A run with this runId exists with a different action'),
        413: problem('The body, or a job action over the jobs limits (TALLYHO_JOBS_MAX_ITEMS, TALLYHO_JOBS_MAX_ITEM_BYTES)'),
        429: problem('The generation already has TALLYHO_GATES_MAX_WAITERS waiting runs; retry after Retry-After or the release'),
        503: unavailable,
      },
      handle: async ({ params, body }) => {
        const started = await deps.service().startRun(params.name, body?.runId, body?.action ?? { type: 'none' });
        const statusUri = runStatusPath(params.name, started.runId);
        return json(
          202,
          { runId: started.runId, gate: params.name, created: started.created, id: started.instanceId, statusUri },
          { 'retry-after': '10', location: statusUri },
        );
      },
    }),
    defineRoute({
      name: 'gatesRunStatus',
      method: 'GET',
      path: 'gates/{name}/runs/{runId}',
      summary: "A gated run's state: waiting, proceeded (with the release and its action's result) or failed (with the reason)",
      tags,
      params: runParams,
      responses: {
        200: { description: 'The run', schema: runState },
        400: badRequest,
        404: problem('No such run of this gate'),
        503: unavailable,
      },
      handle: async ({ params }) => {
        const { instanceId, ...run } = await deps.service().runStatus(params.name, params.runId);
        return json(200, { ...run, id: instanceId }, { 'cache-control': 'no-store' });
      },
    }),
    defineRoute({
      name: 'gatesAudit',
      method: 'GET',
      path: 'gates/{name}/audit',
      summary: "The gate's audit log: every create, release and reset with who, when, generation and how",
      tags,
      params: gateParams,
      query: auditQuery,
      responses: {
        200: { description: 'Oldest first', schema: auditRecordSchema.array() },
        400: badRequest,
        503: unavailable,
      },
      handle: async ({ params, query }) => json(200, await deps.audit().list(params.name, query.limit ?? 100)),
    }),
  ];
}
