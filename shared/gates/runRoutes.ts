/** The gates API's runs: start a gated run (registered with the gate), read its state. */
import { acceptedResponse, acceptedResult } from '../http/operation';
import { json } from '../http/responses';
import { defineRoute, type RouteDefinition } from '../http/route';
import { problem } from '../http/schemas';
import { exampleItem } from '../jobs/http/schemas';
import { badRequest, type GateRouteDeps, notFound, tags, unavailable } from './routeCommon';
import { gateParams, runBody, runParams, runStarted, runState, runStatusPath } from './schemas';

/** A run waits for a release (an admin's or a schedule's), seldom seconds away: a poll every 10 s is enough. */
const runPollSeconds = 10;

export function gatesStartRunRoute(deps: GateRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'gatesStartRun',
    method: 'POST',
    path: 'gates/{name}/runs',
    summary: 'Start a gated durable run: it waits for the release, then performs its action',
    description:
      "Answers 202 with the run id and `statusUri` (also the Location), the run's own status route (docs/http-api.md: long-running " +
      'operations). A run that registers ' +
      'after the release proceeds at once. With `runId`, a repeated start with the same action returns the first run ' +
      '(`created: false`); another action is a 409. A generation holds at most TALLYHO_GATES_MAX_WAITERS waiting runs: ' +
      'a start beyond that is a 429 (start it after the release).',
    tags,
    durable: true,
    params: gateParams,
    body: runBody,
    maxBodyBytes: 48 * 1024,
    examples: [
      {},
      { action: { type: 'none' } },
      { runId: 'worker-1' },
      { runId: 'worker-17', action: { type: 'enqueue', payload: { shard: 17 } } },
      {
        runId: 'month-end',
        action: {
          type: 'job',
          processor: 'wordcount',
          items: [exampleItem],
        },
      },
    ],
    responses: {
      202: acceptedResponse('The run is started (or was already)', runStarted),
      400: badRequest,
      404: notFound,
      409: problem('A run with this runId exists with a different action'),
      413: problem('The body, or a job action over the jobs limits (TALLYHO_JOBS_MAX_ITEMS, TALLYHO_JOBS_MAX_ITEM_BYTES)'),
      429: problem(
        'The generation already has TALLYHO_GATES_MAX_WAITERS waiting runs, or a quarter of them are yours; retry after Retry-After or the release',
      ),
      503: unavailable,
    },
    handle: async ({ params, body, durable, caller }) => {
      const started = await deps
        .gates()
        .commands(durable())
        .startRun(params.name, body?.runId, body?.action ?? { type: 'none' }, caller.id);
      const run = { runId: started.runId, gate: params.name, created: started.created, id: started.instanceId };
      return acceptedResult(run, runStatusPath(params.name, started.runId), runPollSeconds);
    },
  });
}

export function gatesRunStatusRoute(deps: GateRouteDeps): RouteDefinition {
  return defineRoute({
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
    handle: async ({ params, caller }) => {
      const { instanceId, ...run } = await deps.gates().reader.runStatus(params.name, params.runId, caller);
      return json(200, { ...run, id: instanceId }, { 'cache-control': 'no-store' });
    },
  });
}
