/** Submitting jobs and reading them: submit, list, get, cancel, and running a job's failed items again. */
import { readIdempotencyKey } from '../../http/idempotencyHeader';
import { pageBody, pageQuery } from '../../http/paging';
import { acceptedResponse, acceptedResult } from '../../http/operation';
import { json } from '../../http/responses';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { idempotencyKeyHeader, problem } from '../../http/schemas';
import { badId, type JobRouteDeps, notFound, tags, unavailable } from './routeCommon';
import { jobAccepted, jobFigures, jobList, jobParams, jobView, submitBody } from './schemas';
import { viewJob } from './view';

/** The registered processors, as the submit route's description lists them. */
function registered(deps: JobRouteDeps): string {
  return deps.processors.map((p) => `\`${p.name}\` (${p.description})`).join('; ');
}

/** Batches finish in seconds; a job's progress read every 2 s is what the clients' progress loop does too. */
const jobPollSeconds = 2;
/** The background step of a cancel writes thousands of items a second: a status read a second later mostly finds it done. */
const cancelPollSeconds = 1;

export function jobsSubmitRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'jobsSubmit',
    method: 'POST',
    path: 'jobs',
    summary: 'Submit a job',
    description:
      'Stores the items, packs them into envelopes and enqueues them; answers 202 with the job. `processor` is one the app ' +
      `registers — ${registered(deps)} — or one declared with PUT /api/processors/{name} (its workers lease the batches, or its ` +
      'endpoint receives them). Items are checked for shape here (an object with a unique `id`, and the declared item schema if ' +
      'any); an in-app processor validates each one and records an invalid item as a failure with its reason. ' +
      'With an Idempotency-Key a resubmission returns the same job (`Idempotent-Replayed: true`) and finishes an enqueue a crash ' +
      'interrupted; reusing a key with other items is a 409.',
    tags,
    body: submitBody,
    bodyRequired: true,
    maxBodyBytes: deps.maxRequestBytes,
    ownBodyLimit: true,
    requestHeaders: [idempotencyKeyHeader],
    examples: [
      submitBody.meta()?.example,
      ...deps.processors.flatMap((p) => (p.example === undefined ? [] : [p.example])),
      // A declared processor's job (docs/jobs.md declares `thumbnails` first).
      {
        processor: 'thumbnails',
        items: [
          { id: 'img-1', url: 'https://example.com/1.jpg' },
          { id: 'img-2', url: 'https://example.com/2.pdf' },
          { id: 'img-3', url: 'https://example.com/3.jpg' },
        ],
      },
    ],
    responses: {
      202: acceptedResponse('The job is accepted (and its envelopes enqueued); `statusUri` is the job', jobAccepted),
      400: problem(
        'Malformed body, unknown processor, an item without a valid id, duplicate ids, an item nested too deeply or not matching the ' +
          "processor's item schema (the issue names the item and field); nothing was stored",
      ),
      409: problem('The Idempotency-Key was first used with other items'),
      413: problem(
        'Body larger than TALLYHO_JOBS_MAX_REQUEST_BYTES, more items than TALLYHO_JOBS_MAX_ITEMS, or an item larger than TALLYHO_JOBS_MAX_ITEM_BYTES; nothing was stored',
      ),
      429: problem(
        'TALLYHO_JOBS_MAX_OPEN jobs are unfinished, or TALLYHO_JOBS_MAX_OPEN_PER_OWNER of them are yours; submit again after Retry-After. Nothing was stored',
      ),
      503: unavailable,
    },
    handle: async ({ body, headers, caller }) => {
      const key = readIdempotencyKey(headers);
      const { job, replayed } = await deps.jobs().submissions.submit(body, key, { owner: caller.id });
      const view = viewJob(job, undefined);
      return acceptedResult(view, view.links.self as string, jobPollSeconds, replayed ? { 'idempotent-replayed': 'true' } : {});
    },
  });
}

export function jobsListRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'jobsList',
    method: 'GET',
    path: 'jobs',
    summary: "The caller's jobs with their progress, a page at a time (an admin's: everyone's)",
    description:
      'In job id order: ids given by the app start with the submission time (oldest first); jobs named after an Idempotency-Key ' +
      '(`k-…`) follow them.',
    tags,
    query: pageQuery({}),
    responses: {
      200: { description: 'The jobs', schema: jobList },
      400: problem('Bad maxPageSize or continuationToken'),
      503: unavailable,
    },
    handle: async ({ query, caller }) =>
      json(
        200,
        pageBody(await deps.jobs().reads.list(query, caller), (job) => job, { unreadable: true }),
        { 'cache-control': 'no-store' },
      ),
  });
}

export function jobsFiguresRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'jobsFigures',
    method: 'GET',
    path: 'figures/jobs',
    summary: 'Envelopes waiting and poisoned, per work queue and per declared processor (for operators)',
    description:
      'Reads every work queue and its poison queue now (three reads per queue, TALLYHO_JOBS_QUEUES queues: two lengths and a peek at ' +
      "the front for the oldest envelope's age), and each declared processor's queue (its length and a peek at up to 32 envelopes): the " +
      'figures the tallyho.job.backlog, tallyho.job.backlog.age, tallyho.job.poison.backlog and tallyho.job.processor.* gauges report, ' +
      'the same whichever instance answers.',
    tags,
    responses: {
      200: { description: 'The backlog', schema: jobFigures },
      503: unavailable,
    },
    handle: async () => json(200, await deps.jobs().reads.figures(), { 'cache-control': 'no-store' }),
  });
}

export function jobsGetRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'jobsGet',
    method: 'GET',
    path: 'jobs/{id}',
    summary: 'A job: state, totals, timings',
    tags,
    params: jobParams,
    responses: { 200: { description: 'The job', schema: jobView }, 400: badId, 404: notFound, 503: unavailable },
    handle: async ({ params, caller }) => json(200, await deps.jobs().reads.viewFor(params.id, caller)),
  });
}

export function jobsRetryFailedRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'jobsRetryFailed',
    method: 'POST',
    path: 'jobs/{id}/retry-failed',
    summary: 'Run the failed items of a job again',
    description:
      'For a job that completed with failures: its failed items run again as a new round (fresh attempts); the job goes back to ' +
      '`running` and completes (with a new event) when they are done. Repeating the call while the round is being enqueued resumes it.',
    tags,
    // It may first hand on the last completion's output (to a stream), on this invocation's Durable client.
    durable: true,
    params: jobParams,
    responses: {
      202: acceptedResponse('The failed items are enqueued again; `statusUri` is the job', jobAccepted),
      400: badId,
      404: notFound,
      409: problem('The job is still running, or completed without failures'),
      503: unavailable,
    },
    handle: async ({ params, durable, caller }) => {
      await deps.jobs().reads.owned(params.id, caller);
      await deps.jobs().submissions.retryFailed(params.id, durable());
      const view = await deps.jobs().reads.viewFor(params.id, caller);
      return acceptedResult(view, view.links.self as string, jobPollSeconds);
    },
  });
}

export function jobsCancelRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'jobsCancel',
    method: 'DELETE',
    path: 'jobs/{id}',
    summary: 'Cancel a job (a long-running operation)',
    description:
      'Answers 202 once the job is `cancelling`: from then on its leases are refused on every instance and its queued batches ' +
      'dropped. In the background every item without a final result becomes `cancelled` (an item a worker finished first keeps ' +
      'its result) and the job ends `cancelled`: follow `statusUri` (the job) every `Retry-After` seconds until then. Repeating ' +
      'the call answers the same (and resumes a background step that stopped).',
    tags,
    params: jobParams,
    responses: {
      202: acceptedResponse('The job, `cancelling` (or already `cancelled`); `statusUri` is the job', jobAccepted),
      400: badId,
      404: notFound,
      409: problem('The job has already finished'),
      503: unavailable,
    },
    handle: async ({ params, caller }) => {
      await deps.jobs().reads.owned(params.id, caller);
      await deps.jobs().cancels.request(params.id);
      const view = await deps.jobs().reads.viewFor(params.id, caller);
      return acceptedResult(view, view.links.self as string, cancelPollSeconds);
    },
  });
}
