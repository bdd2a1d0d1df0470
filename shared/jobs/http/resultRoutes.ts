/** What a job produced: its item results, its failures with reasons, and the files its processor wrote. */
import { pageBody } from '../../http/paging';
import { json } from '../../http/responses';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { problem } from '../../http/schemas';
import { type JobRouteDeps, notFound, tags, unavailable } from './routeCommon';
import { failuresPage, failuresQuery, fileParams, jobParams, resultsPage, resultsQuery } from './schemas';
import { viewFailure, viewResult } from './view';

/** What a page of a job's results (or failures) answers; `bad` says what a 400 is for. */
function pageAnswers(schema: typeof resultsPage | typeof failuresPage, bad: string) {
  return { 200: { description: 'One page', schema }, 400: problem(bad), 404: notFound, 503: unavailable };
}

export function jobsResultsRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'jobsResults',
    method: 'GET',
    path: 'jobs/{id}/results',
    summary: "A page of the job's item results",
    description: 'In item-id order, a page at a time.',
    tags,
    params: jobParams,
    query: resultsQuery,
    responses: pageAnswers(resultsPage, 'Bad id, status, maxPageSize or continuationToken'),
    handle: async ({ params, query, caller }) =>
      json(200, pageBody(await deps.jobs().reads.results(params.id, 'results', query.status, query, caller), viewResult)),
  });
}

export function jobsFailuresRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'jobsFailures',
    method: 'GET',
    path: 'jobs/{id}/failures',
    summary: "A page of the job's failed items, with reasons",
    tags,
    params: jobParams,
    query: failuresQuery,
    responses: pageAnswers(failuresPage, 'Bad id, maxPageSize or continuationToken'),
    handle: async ({ params, query, caller }) =>
      json(200, pageBody(await deps.jobs().reads.results(params.id, 'failures', 'failed', query, caller), viewFailure)),
  });
}

export function jobsFileRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'jobsFile',
    method: 'GET',
    path: 'jobs/{id}/files/{name}',
    summary: 'A file the processor wrote (e.g. wordcount.csv)',
    tags,
    params: fileParams,
    responses: {
      200: { description: 'The file', contentType: 'text/csv' },
      400: problem('Bad id or file name'),
      404: problem('No such job, or no such file (yet)'),
      503: unavailable,
    },
    handle: async ({ params, caller }) => {
      const file = await deps.jobs().reads.file(params.id, params.name, caller);
      return { status: 200, headers: { 'content-type': file.contentType }, body: new Uint8Array(file.body) };
    },
  });
}
