/** Reading and steering schedules: list, get, cancel, pause, resume and trigger now. */
import * as z from 'zod';

import { readerLevelOf } from '../http/authorization';
import { pageBody, pageQuery } from '../http/paging';
import { acceptedResponse, acceptedResult } from '../http/operation';
import { json } from '../http/responses';
import { defineRoute, type RouteDefinition } from '../http/route';
import { problem } from '../http/schemas';
import { badRequest, notFound, params, type ScheduleRouteDeps, tags, unavailable } from './routeCommon';
import { scheduleFigures, scheduleList, scheduleStates, scheduleView, triggerAccepted } from './views';

/** A triggered run starts at once (unless the overlap policy holds it) and most targets take a second or two. */
const triggerPollSeconds = 2;

const listQuery = pageQuery({ state: z.enum(scheduleStates).optional() });

function controlRoute(
  name: 'schedulesPause' | 'schedulesResume',
  action: 'pause' | 'resume',
  summary: string,
  deps: ScheduleRouteDeps,
): RouteDefinition {
  return defineRoute({
    name,
    method: 'POST',
    path: `schedules/{id}/${action}`,
    summary,
    tags,
    durable: true,
    params,
    responses: {
      200: { description: 'The schedule (already in that state is fine)', schema: scheduleView },
      400: badRequest,
      404: notFound,
      409: problem('The schedule has ended, or is a Service Bus scheduled delivery'),
      503: unavailable,
    },
    handle: async ({ params: p, durable, caller }) => {
      const service = deps.service(durable());
      return json(200, await service[action](p.id, await service.requireOwned(p.id, caller)));
    },
  });
}

const getTexts = {
  schedulesGet: {
    summary: 'A schedule: state, next fire time, recent runs with their outcome',
    description:
      'Read with a function key, a schedule an admin created shows its target as `{ type, redacted: true }` and the reasons of its ' +
      "failed runs hidden; a webhook's answer is never shown at this level (only its status). GET /api/schedules/{id}/privileged " +
      'answers the whole schedule to the admin key.',
  },
  schedulesGetPrivileged: {
    summary: 'A schedule with everything an admin may see: its target and payload, and what its targets answered; admin key',
    description: 'The same schedule as GET /api/schedules/{id}, nothing redacted, whoever created it.',
  },
} as const;

/** Reading one schedule: the function-level route sees what its level may (views.ts `Reader`), the admin twin everything. */
function getRoute(name: keyof typeof getTexts, path: string, deps: ScheduleRouteDeps): RouteDefinition {
  const reader = readerLevelOf(name);
  return defineRoute({
    name,
    method: 'GET',
    path,
    ...getTexts[name],
    tags,
    durable: true,
    params,
    responses: { 200: { description: 'The schedule', schema: scheduleView }, 400: badRequest, 404: notFound, 503: unavailable },
    handle: async ({ params: p, durable, caller }) => {
      const service = deps.service(durable());
      // The function-level route answers the owner (or an admin) only; the admin twin every schedule.
      if (reader === 'function') await service.requireOwned(p.id, caller);
      return json(200, await service.get(p.id, reader));
    },
  });
}

export function scheduleManageRoutes(deps: ScheduleRouteDeps): RouteDefinition[] {
  return [
    defineRoute({
      name: 'schedulesList',
      method: 'GET',
      path: 'schedules',
      summary: 'List schedules, optionally in one state, a page at a time',
      tags,
      durable: true,
      query: listQuery,
      responses: { 200: { description: 'One page', schema: scheduleList }, 400: badRequest, 503: unavailable },
      handle: async ({ query, durable }) =>
        json(
          200,
          pageBody(await deps.service(durable()).list(query.state, query), (s) => s),
        ),
    }),
    defineRoute({
      name: 'schedulesFigures',
      method: 'GET',
      path: 'figures/schedules',
      summary: 'How late schedules run (for operators)',
      description:
        "Reads one page of the schedule index now (at most 200 schedules): each schedule's latest run and how late it started (the " +
        'lateness the tallyho.schedule.lateness histogram records), and active schedules whose next fire is past due.',
      tags,
      durable: true,
      responses: { 200: { description: 'The figures', schema: scheduleFigures }, 503: unavailable },
      handle: async ({ durable }) => json(200, await deps.service(durable()).figures(), { 'cache-control': 'no-store' }),
    }),
    getRoute('schedulesGet', 'schedules/{id}', deps),
    getRoute('schedulesGetPrivileged', 'schedules/{id}/privileged', deps),
    defineRoute({
      name: 'schedulesCancel',
      method: 'DELETE',
      path: 'schedules/{id}',
      summary: 'Cancel a schedule: it never fires again (a run in progress finishes)',
      tags,
      durable: true,
      params,
      responses: {
        200: { description: 'Cancelled (or already cancelled)', schema: scheduleView },
        400: badRequest,
        404: notFound,
        409: problem('A one-off that already fired (or is firing), or a schedule that has ended'),
        503: unavailable,
      },
      handle: async ({ params: p, durable, caller }) => {
        const service = deps.service(durable());
        return json(200, await service.cancel(p.id, await service.requireOwned(p.id, caller)));
      },
    }),
    controlRoute('schedulesPause', 'pause', 'Pause a schedule: fires are skipped until it is resumed', deps),
    controlRoute('schedulesResume', 'resume', 'Resume a paused schedule with its next fire', deps),
    defineRoute({
      name: 'schedulesTrigger',
      method: 'POST',
      path: 'schedules/{id}/trigger',
      summary: 'Run the target now (also while paused); the overlap policy applies',
      tags,
      durable: true,
      params,
      responses: {
        202: acceptedResponse('Requested; the run shows up in `runs` of `statusUri` with this triggerId', triggerAccepted),
        400: badRequest,
        404: notFound,
        409: problem('The schedule has ended, or is a Service Bus scheduled delivery'),
        429: problem('Too many triggers waiting'),
        503: unavailable,
      },
      handle: async ({ params: p, durable, caller }) => {
        const service = deps.service(durable());
        const level = await service.requireOwned(p.id, caller);
        const triggered = await service.trigger(p.id, level);
        // An admin's status is the whole view (a run's failure reason included); an owner's, what its level may see.
        const status = `/api/schedules/${encodeURIComponent(p.id)}${level === 'admin' ? '/privileged' : ''}`;
        return acceptedResult(triggered, status, triggerPollSeconds);
      },
    }),
  ];
}
