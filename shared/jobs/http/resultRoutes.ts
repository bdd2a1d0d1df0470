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

/**
 * The results or failures of a job: the owner's route (function level: its owner or an admin, 404 to
 * anyone else) and its admin-level twin, `…/privileged`, for operators — in the keys modes the master
 * key on a function-level route is `key:shared` (the host does not say which key it matched), so the
 * console reads every caller's jobs through the twin.
 */
function resultListRoute(deps: JobRouteDeps, list: 'results' | 'failures', privileged: boolean): RouteDefinition {
  const common = { method: 'GET', tags, params: jobParams } as const;
  const path = `jobs/{id}/${list}${privileged ? '/privileged' : ''}`;
  const whose = privileged ? " (admin: any caller's job)" : '';
  if (list === 'results') {
    return defineRoute({
      ...common,
      name: privileged ? 'jobsResultsPrivileged' : 'jobsResults',
      path,
      summary: `A page of the job's item results${whose}`,
      description: 'In item-id order, a page at a time.',
      query: resultsQuery,
      responses: pageAnswers(resultsPage, 'Bad id, status, maxPageSize or continuationToken'),
      handle: async ({ params, query, caller }) =>
        json(200, pageBody(await deps.jobs().reads.results(params.id, 'results', query.status, query, caller), viewResult)),
    });
  }
  return defineRoute({
    ...common,
    name: privileged ? 'jobsFailuresPrivileged' : 'jobsFailures',
    path,
    summary: `A page of the job's failed items, with reasons${whose}`,
    query: failuresQuery,
    responses: pageAnswers(failuresPage, 'Bad id, maxPageSize or continuationToken'),
    handle: async ({ params, query, caller }) =>
      json(200, pageBody(await deps.jobs().reads.results(params.id, 'failures', 'failed', query, caller), viewFailure)),
  });
}

export function jobsResultsRoutes(deps: JobRouteDeps): RouteDefinition[] {
  return [
    resultListRoute(deps, 'results', false),
    resultListRoute(deps, 'failures', false),
    resultListRoute(deps, 'results', true),
    resultListRoute(deps, 'failures', true),
  ];
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
