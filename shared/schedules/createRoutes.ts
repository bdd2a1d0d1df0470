/** Creating a schedule: the function-level route and its admin-level twin, one body and one set of answers. */
import { authorizationOf, refuseAdminOnly } from '../http/authorization';
import { json } from '../http/responses';
import { defineRoute, type ResponseDoc, type RouteDefinition } from '../http/route';
import { problem } from '../http/schemas';
import { creatorOf } from './creator';
import { createScheduleBody, limits } from './definition';
import { badRequest, type ScheduleRouteDeps, tags, unavailable } from './routeCommon';
import { scheduleView } from './views';

/** The admin-level twin of POST /api/schedules: the only way to create a schedule whose target performs an admin action. */
const privilegedPath = 'schedules/privileged';

// The first two are the manual's (docs/schedules.md, README.md), executed by its example runner.
const examples = [
  {
    id: 'remind-ORD-42',
    at: '2027-01-15T09:00:00+01:00',
    target: { type: 'queueMessage', queue: 'app-reminders', message: { orderId: 'ORD-42' } },
  },
  {
    id: 'nightly-report',
    cron: '0 30 2 * * *',
    timeZone: 'Europe/Berlin',
    overlap: 'bufferOne',
    catchUp: { policy: 'all', limit: 3 },
    target: { type: 'webhook', url: 'https://hooks.example.com/nightly', payload: { report: 'sales' } },
  },
  {
    at: '2027-01-15T09:00:00Z',
    target: { type: 'queueMessage', queue: 'app-reminders', message: { orderId: 'ORD-1' } },
    by: 'billing-app',
  },
  {
    id: 'nightly',
    cron: '0 30 2 * * *',
    timeZone: 'America/New_York',
    overlap: 'skip',
    catchUp: 'once',
    target: { type: 'webhook', url: 'https://hooks.example.com/nightly' },
  },
  {
    at: '2027-01-15T09:00:00Z',
    target: { type: 'serviceBus', entity: 'app-orders', message: { orderId: 'ORD-1' }, sessionId: 'ORD-1', delivery: 'scheduled' },
  },
];

const createTexts = {
  schedulesCreate: {
    summary: 'Schedule a one-off (`at`) or a recurrence (`cron` + `timeZone`)',
    more:
      ' A target that performs an admin action (`gateRelease`) is a 403 here: create it with the admin key through ' +
      `POST /api/${privilegedPath}.`,
    examples,
  },
  schedulesCreatePrivileged: {
    summary: 'Schedule any target, including those that perform admin actions (`gateRelease`); admin key',
    more: ' The same body and answers as POST /api/schedules; the schedule records that an admin-key holder created it.',
    examples: [
      ...examples,
      // The manual's gateRelease schedules (docs/schedules.md), executed by its example runner.
      {
        id: 'storefront-weekdays',
        cron: '0 0 9 * * MON-FRI',
        timeZone: 'America/New_York',
        target: { type: 'gateRelease', gate: 'storefront' },
      },
      { id: 'open-doors', at: '2030-01-15T09:00:00+01:00', target: { type: 'gateRelease', gate: 'launch' } },
      { cron: '0 0 * * * *', catchUp: { policy: 'all', limit: 3 }, target: { type: 'gateRelease', gate: 'launch' }, by: 'ops' },
    ],
  },
} as const;

/** What only the function-level create answers. */
function refusals(level: 'function' | 'admin'): Record<number, ResponseDoc> {
  if (level === 'admin') return {};
  return {
    403: problem(`The target performs an admin action; use POST /api/${privilegedPath}`),
    429: problem('You hold your share (a quarter) of TALLYHO_SCHEDULES_MAX_LIVE; nothing was created'),
  };
}

/**
 * Both create routes take the same body and give the same answers; the function-level one refuses
 * targets that perform an admin action (the authorization table's rule), and each records its level
 * with the creator.
 */
function createRoute(name: keyof typeof createTexts, path: string, deps: ScheduleRouteDeps): RouteDefinition {
  const texts = createTexts[name];
  const level = authorizationOf(name).level === 'admin' ? 'admin' : 'function';
  return defineRoute({
    name,
    method: 'POST',
    path,
    summary: texts.summary,
    description:
      'Creates the schedule and answers 201 with its state and next fire time. The same id again with the same definition answers 200 ' +
      '(idempotent, safe to retry); with a different one 409. A bad cron, time, zone or target is a 400 and nothing is created.' +
      texts.more,
    tags,
    durable: true,
    body: createScheduleBody,
    bodyRequired: true,
    maxBodyBytes: limits.bodyBytes,
    examples: texts.examples,
    responses: {
      200: { description: 'It already existed with this definition', schema: scheduleView },
      201: { description: 'Created', schema: scheduleView },
      400: badRequest,
      ...refusals(level),
      409: problem(
        level === 'admin'
          ? 'The id exists with a different definition'
          : 'The id exists with a different definition, or TALLYHO_SCHEDULES_MAX_LIVE schedules are live (nothing was created)',
      ),
      413: problem(`Body larger than ${limits.bodyBytes} bytes`),
      503: unavailable,
    },
    handle: async ({ body, durable, caller }) => {
      refuseAdminOnly(name, body.target.type, `POST /api/${privilegedPath}`);
      const { created, view } = await deps.service(durable()).create(body, creatorOf(body.by, level, caller.id));
      return json(created ? 201 : 200, view, { location: `/api/schedules/${view.id}` });
    },
  });
}

export function scheduleCreateRoutes(deps: ScheduleRouteDeps): RouteDefinition[] {
  return [createRoute('schedulesCreate', 'schedules', deps), createRoute('schedulesCreatePrivileged', privilegedPath, deps)];
}
