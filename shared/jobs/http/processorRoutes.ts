/** Declared processors: declare or change one, read them, rotate a webhook's secret (all admin). */
import { json } from '../../http/responses';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { problem } from '../../http/schemas';
import type { DeclaredProcessor } from '../processors/processorDefinition';
import { processorQueueName } from '../processors/processorDefinition';
import { type JobRouteDeps, tags, unavailable } from './routeCommon';
import { declareBody, processorList, processorParams, processorView, secretView } from './processorSchemas';

const iso = (ms: number): string => new Date(ms).toISOString();

/** What the API shows of a declaration: never the secret (that only in the answers that make one). */
function viewProcessor(p: DeclaredProcessor, queuePrefix: string, secret?: string) {
  const common = {
    name: p.name,
    type: p.type,
    batchSize: p.batchSize,
    leaseSeconds: p.leaseSeconds,
    maxAttempts: p.maxAttempts,
    retry: p.retry,
    itemSchema: p.itemSchema,
    workers: p.workers ?? [],
    idleLimitSeconds: p.idleLimitSeconds ?? null,
    queue: processorQueueName(queuePrefix, p.name),
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
  };
  if (p.type === 'external') return common;
  return {
    ...common,
    url: p.url,
    timeoutSeconds: p.timeoutSeconds,
    concurrency: p.concurrency,
    previousSecretValidUntil: p.previousSecretUntil === null ? null : iso(p.previousSecretUntil),
    ...(secret === undefined ? {} : { secret }),
  };
}

const notDeclared = problem('No declared processor of that name');

export function processorsDeclareRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'processorsDeclare',
    method: 'PUT',
    path: 'processors/{name}',
    summary: 'Declare (or change) an external or webhook processor',
    description:
      '`external`: workers lease its batches (POST /api/processors/{name}/leases). `webhook`: the app POSTs its batches to `url`, ' +
      'signed per the Standard Webhooks specification with a secret returned once, in the 201 of its declaration. Each processor ' +
      "has a queue of its own. A name the app's own processors use is a 409; so is changing a processor's type.",
    tags,
    params: processorParams,
    body: declareBody,
    bodyRequired: true,
    examples: [
      declareBody.meta()?.example,
      { type: 'webhook', url: 'https://hooks.example.com/thumbnails', batchSize: 20, timeoutSeconds: 30, concurrency: 4 },
      // A local endpoint over http (docs/jobs.md "Try it locally": private addresses allowed, the host on the allow-list).
      { type: 'webhook', url: 'http://localhost:8080/hook', batchSize: 10 },
    ],
    responses: {
      200: { description: 'Changed', schema: processorView },
      201: { description: 'Declared (a webhook processor: with its `secret`, shown this once)', schema: processorView },
      400: problem('Bad name or body, an item schema that does not compile, a URL the webhook rules refuse'),
      409: problem("An in-app processor's name, another type than declared, or TALLYHO_JOBS_MAX_PROCESSORS reached"),
      503: unavailable,
    },
    handle: async ({ params, body }) => {
      const declared = await deps.jobs().processors.declare(params.name, body);
      const view = viewProcessor(declared.processor, deps.queuePrefix, declared.secret);
      return json(declared.created ? 201 : 200, view, { location: `/api/processors/${params.name}`, 'cache-control': 'no-store' });
    },
  });
}

export function processorsListRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'processorsList',
    method: 'GET',
    path: 'processors',
    summary: 'The declared processors',
    tags,
    responses: { 200: { description: 'Every declared processor, by name', schema: processorList }, 503: unavailable },
    handle: async () =>
      json(
        200,
        { processors: (await deps.jobs().processors.list()).map((p) => viewProcessor(p, deps.queuePrefix)) },
        { 'cache-control': 'no-store' },
      ),
  });
}

export function processorsGetRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'processorsGet',
    method: 'GET',
    path: 'processors/{name}',
    summary: 'A declared processor',
    tags,
    params: processorParams,
    responses: {
      200: { description: 'The declaration', schema: processorView },
      400: problem('Bad name'),
      404: notDeclared,
      503: unavailable,
    },
    handle: async ({ params }) =>
      json(200, viewProcessor(await deps.jobs().processors.get(params.name), deps.queuePrefix), { 'cache-control': 'no-store' }),
  });
}

export function processorsRotateSecretRoute(deps: JobRouteDeps): RouteDefinition {
  return defineRoute({
    name: 'processorsRotateSecret',
    method: 'POST',
    path: 'processors/{name}/rotate-secret',
    summary: "A new secret for a webhook processor's signatures",
    description:
      'The new secret is shown in this answer only. Pushes carry signatures with both secrets for a day, so the endpoint can switch over.',
    tags,
    params: processorParams,
    responses: {
      200: { description: 'The new secret', schema: secretView },
      400: problem('Bad name'),
      404: notDeclared,
      409: problem('An external processor: it has no secret'),
      503: unavailable,
    },
    handle: async ({ params }) => {
      const rotated = await deps.jobs().processors.rotateSecret(params.name);
      return json(
        200,
        { name: params.name, secret: rotated.secret, previousSecretValidUntil: iso(rotated.previousUntil) },
        { 'cache-control': 'no-store' },
      );
    },
  });
}
