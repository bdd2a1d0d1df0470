/** Workers of external processors: lease a batch (long poll), extend the lease, complete it with a result per item. */
import { json } from '../../http/responses';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { problem } from '../../http/schemas';
import { processorParams, completionBody, completionView, extendView, leaseParams, leaseRequest, leaseView } from './processorSchemas';
import type { WaitEnd } from '../delivery/leaseHub';
import { type JobRouteDeps, tags, unavailable } from './routeCommon';

const iso = (ms: number): string => new Date(ms).toISOString();
const leaseLinks = (leaseId: string) => ({ extend: `/api/leases/${leaseId}/extend`, complete: `/api/leases/${leaseId}/complete` });
const expired = problem(
  'The lease ran out (its items come back in another lease), was spent by a completion or an extension, or its job was cancelled; nothing changed',
);
const notCompleted = problem(
  'The lease ran out (its items come back in another lease) or was spent by an extension before any completion, or its job was cancelled; nothing changed',
);

export function leasesTakeRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'leasesTake',
    method: 'POST',
    path: 'processors/{name}/leases',
    summary: "Lease the next batch of an external processor's items",
    description:
      'Answers 200 with a lease: its items (each with its job, its attempt and its data) are yours until `expiresAt`; extend it ' +
      'while you work, then complete it. With nothing ready it waits up to `wait` seconds (long poll) and answers 204. An item ' +
      'whose lease runs out, or that a completion does not mention, comes back in a later lease as its next attempt — but a ' +
      'lease never used (no extension, no completion: its caller had gone) is not counted as an attempt. ' +
      'A caller waits in at most a quarter of TALLYHO_JOBS_MAX_LEASE_WAITERS places per instance: beyond it, or on a full ' +
      'instance, the oldest wait of the largest holder answers 204 early. `wait: 0` takes no place, so it is never turned away for room. ' +
      'The `Server-Timing` header (`lease;dur=<ms>;desc=<how>`) says how long the app held the request, its wait included, and ' +
      'how it ended: `granted`, `timeout` (the wait ran out), `preempted` (its place went to a fairer share) or `stopping` ' +
      '(the instance is shutting down).',
    tags,
    params: processorParams,
    workerTarget: ({ name }) => deps.jobs().leases.workersOf(name),
    body: leaseRequest,
    bodyRequired: false,
    examples: [{ wait: 20, maxItems: 50 }],
    responses: {
      200: { description: 'A batch, leased', schema: leaseView },
      204: { description: 'Nothing to lease within `wait`' },
      400: problem('Bad name, wait or maxItems'),
      404: problem('No declared processor of that name'),
      409: problem('A webhook processor (the app pushes its batches)'),
      503: unavailable,
    },
    handle: async ({ params, body, caller }) => {
      const request = body ?? leaseRequest.parse({});
      const started = performance.now();
      let ended: WaitEnd = 'timeout';
      // How long the app held the request and how it ended (W3C Server Timing): a worker told
      // `preempted` is past its share of the instance's waiters. A wait that lost its place answers
      // early, however late a busy host delivers the answer, or however long a stalled machine took.
      const timing = (how: WaitEnd | 'granted'): Record<string, string> => ({
        'cache-control': 'no-store',
        'server-timing': `lease;dur=${Math.round(performance.now() - started)};desc="${how}"`,
      });
      const granted = await deps.jobs().leases.take(params.name, {
        waitSeconds: request.wait,
        holder: caller.id,
        onEnd: (why) => (ended = why),
        ...(request.maxItems === undefined ? {} : { maxItems: request.maxItems }),
      });
      if (granted === undefined) return { status: 204, headers: timing(ended) };
      return json(
        200,
        {
          leaseId: granted.leaseId,
          processor: params.name,
          expiresAt: iso(granted.lease.expiresAt),
          leaseSeconds: Math.round((granted.lease.expiresAt - granted.grantedAt) / 1000),
          items: granted.items,
          ...(granted.traceparent === undefined ? {} : { traceparent: granted.traceparent }),
          links: leaseLinks(granted.leaseId),
        },
        timing('granted'),
      );
    },
  });
}

export function leasesExtendRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'leasesExtend',
    method: 'POST',
    path: 'leases/{leaseId}/extend',
    summary: 'Extend a lease (heartbeat)',
    description:
      "The lease lasts another of its processor's lease durations from now, under the new `leaseId` answered; the old id is spent.",
    tags,
    params: leaseParams,
    workerTarget: ({ leaseId }) => deps.jobs().leases.workersOfLease(leaseId),
    responses: {
      200: { description: 'Extended', schema: extendView },
      400: problem('Not a lease id'),
      404: problem('Not a lease of this app, or its job is gone'),
      409: expired,
      503: unavailable,
    },
    handle: async ({ params }) => {
      const next = await deps.jobs().leases.extend(params.leaseId);
      return json(200, { leaseId: next.leaseId, expiresAt: iso(next.expiresAt) }, { 'cache-control': 'no-store' });
    },
  });
}

export function leasesCompleteRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'leasesComplete',
    method: 'POST',
    path: 'leases/{leaseId}/complete',
    summary: 'Complete a lease with a result per item',
    description:
      '`succeeded` (with its `output`) and `failed` (with `code` and `reason`) are final; `retry` (with `reason`) brings the item ' +
      "back after the processor's back-off, as its next attempt — past maxAttempts it fails with that reason. An item not mentioned " +
      'comes back like a retry. Each result is recorded once, however often the batch travels. The same lease completed again ' +
      "(its answer was lost) answers the first completion's report and changes nothing.",
    tags,
    params: leaseParams,
    workerTarget: ({ leaseId }) => deps.jobs().leases.workersOfLease(leaseId),
    body: completionBody,
    bodyRequired: true,
    maxBodyBytes: deps.maxRequestBytes,
    examples: [completionBody.meta()?.example],
    responses: {
      200: { description: 'Recorded (or recorded before: the first report)', schema: completionView },
      400: problem('Not a lease id, or a result for an item the lease does not hold (named), a duplicate, an output too large'),
      404: problem('Not a lease of this app, or its job is gone'),
      409: notCompleted,
      413: problem('Body larger than TALLYHO_JOBS_MAX_REQUEST_BYTES'),
      503: unavailable,
    },
    handle: async ({ params, body }) =>
      json(200, await deps.jobs().leases.complete(params.leaseId, body.results), { 'cache-control': 'no-store' }),
  });
}
