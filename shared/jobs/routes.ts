/** The jobs HTTP API, defined once (registration, validation and OpenAPI all come from here). */
import { readIdempotencyKey } from '../http/idempotencyHeader';
import { listQuery } from '../http/listing';
import { json } from '../http/responses';
import { defineRoute, type RouteDefinition } from '../http/route';
import { idempotencyKeyHeader, problem } from '../http/schemas';
import {
  exampleTransaction,
  failuresPage,
  failuresQuery,
  jobList,
  fileParams,
  jobParams,
  jobView,
  resultsPage,
  resultsQuery,
  submitBody,
} from './schemas';
import type { JobService } from './service';
import { viewFailure, viewJob, viewResult } from './view';

export interface JobRouteDeps {
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without any I/O. */
  readonly service: () => JobService;
  /** Largest submission body (TALLYHO_JOBS_MAX_REQUEST_BYTES). */
  readonly maxRequestBytes: number;
}

const tags = ['jobs'];
const unavailable = problem('Storage unavailable; retry after Retry-After');
const notFound = problem('No such job');
const badId = problem('Not a job id');

export function jobsRoutes(deps: JobRouteDeps): RouteDefinition[] {
  return [
    defineRoute({
      name: 'jobsSubmit',
      method: 'POST',
      path: 'jobs',
      summary: 'Submit a job',
      description:
        'Stores the items, packs them into envelopes and enqueues them; answers 202 with the job. Items are checked for shape here ' +
        '(an object with a unique `id`); the processor validates each one and records an invalid item as a failure with its reason. ' +
        'With an Idempotency-Key a resubmission returns the same job (`Idempotent-Replayed: true`) and finishes an enqueue a crash ' +
        'interrupted; reusing a key with other items is a 409.',
      tags,
      body: submitBody,
      bodyRequired: true,
      maxBodyBytes: deps.maxRequestBytes,
      requestHeaders: [idempotencyKeyHeader],
      examples: [
        submitBody.meta()?.example,
        {
          processor: 'billing',
          items: [
            exampleTransaction,
            {
              id: 'tx-2',
              customerId: 'c-42',
              amountMinor: 1500,
              currency: 'JPY',
              taxCategory: 'reduced',
              occurredAt: '2026-03-01T12:05:00Z',
            },
          ],
        },
      ],
      responses: {
        202: { description: 'The job is accepted (and its envelopes enqueued)', schema: jobView },
        400: problem('Malformed body, unknown processor, an item without a valid id, duplicate ids; nothing was stored'),
        409: problem('The Idempotency-Key was first used with other items'),
        413: problem(
          'Body larger than TALLYHO_JOBS_MAX_REQUEST_BYTES, more items than TALLYHO_JOBS_MAX_ITEMS, or an item larger than TALLYHO_JOBS_MAX_ITEM_BYTES; nothing was stored',
        ),
        429: problem('TALLYHO_JOBS_MAX_OPEN jobs are unfinished; submit again after Retry-After. Nothing was stored'),
        503: unavailable,
      },
      handle: async ({ body, headers }) => {
        const key = readIdempotencyKey(headers);
        const { job, replayed } = await deps.service().submit(body, key, { limitOpen: true });
        const view = viewJob(job, undefined);
        return json(202, view, { location: view.links.self as string, ...(replayed ? { 'idempotent-replayed': 'true' } : {}) });
      },
    }),
    defineRoute({
      name: 'jobsList',
      method: 'GET',
      path: 'jobs',
      summary: 'The most recent jobs with their progress (for operators)',
      description:
        'Newest first. Reads every job row (job ids are not all time-ordered), so it is meant for an operator, not a client loop.',
      tags,
      query: listQuery,
      responses: {
        200: { description: 'The jobs', schema: jobList },
        400: problem('Bad limit'),
        503: unavailable,
      },
      handle: async ({ query }) => json(200, await deps.service().recent(query.limit), { 'cache-control': 'no-store' }),
    }),
    defineRoute({
      name: 'jobsGet',
      method: 'GET',
      path: 'jobs/{id}',
      summary: 'A job: state, totals, timings',
      tags,
      params: jobParams,
      responses: { 200: { description: 'The job', schema: jobView }, 400: badId, 404: notFound, 503: unavailable },
      handle: async ({ params }) => json(200, await deps.service().view(params.id)),
    }),
    defineRoute({
      name: 'jobsResults',
      method: 'GET',
      path: 'jobs/{id}/results',
      summary: "A page of the job's item results",
      description: 'In item-id order; `next` is the cursor of the following page (null on the last).',
      tags,
      params: jobParams,
      query: resultsQuery,
      responses: {
        200: { description: 'One page', schema: resultsPage },
        400: problem('Bad id, status, limit or cursor'),
        404: notFound,
        503: unavailable,
      },
      handle: async ({ params, query }) => {
        const page = await deps.service().results(params.id, {
          limit: query.limit,
          ...(query.status === undefined ? {} : { status: query.status }),
          ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
        });
        return json(200, { results: page.results.map(viewResult), next: page.cursor ?? null });
      },
    }),
    defineRoute({
      name: 'jobsFailures',
      method: 'GET',
      path: 'jobs/{id}/failures',
      summary: "A page of the job's failed items, with reasons",
      tags,
      params: jobParams,
      query: failuresQuery,
      responses: {
        200: { description: 'One page', schema: failuresPage },
        400: problem('Bad id, limit or cursor'),
        404: notFound,
        503: unavailable,
      },
      handle: async ({ params, query }) => {
        const page = await deps.service().results(params.id, {
          status: 'failed',
          limit: query.limit,
          ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
        });
        return json(200, { failures: page.results.map(viewFailure), next: page.cursor ?? null });
      },
    }),
    defineRoute({
      name: 'jobsRetryFailed',
      method: 'POST',
      path: 'jobs/{id}/retry-failed',
      summary: 'Run the failed items of a job again',
      description:
        'For a job that completed with failures: its failed items run again as a new round (fresh attempts); the job goes back to ' +
        '`running` and completes (with a new event) when they are done. Repeating the call while the round is being enqueued resumes it.',
      tags,
      params: jobParams,
      responses: {
        202: { description: 'The failed items are enqueued again', schema: jobView },
        400: badId,
        404: notFound,
        409: problem('The job is still running, or completed without failures'),
        503: unavailable,
      },
      handle: async ({ params }) => {
        await deps.service().retryFailed(params.id);
        return json(202, await deps.service().view(params.id));
      },
    }),
    defineRoute({
      name: 'jobsFile',
      method: 'GET',
      path: 'jobs/{id}/files/{name}',
      summary: 'A file the processor wrote (billing: invoice.csv)',
      tags,
      params: fileParams,
      responses: {
        200: { description: 'The file', contentType: 'text/csv' },
        400: problem('Bad id or file name'),
        404: problem('No such job, or no such file (yet)'),
        503: unavailable,
      },
      handle: async ({ params }) => {
        const file = await deps.service().file(params.id, params.name);
        return { status: 200, headers: { 'content-type': file.contentType }, body: new Uint8Array(file.body) };
      },
    }),
  ];
}
