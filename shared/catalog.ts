/**
 * Every HTTP route of the app, for documentation: the OpenAPI document is generated from this list.
 * The routes are built with dependencies that refuse to be used, so listing them does no I/O and
 * needs no settings; functions/ registers the same route factories with the real dependencies, and
 * a test checks that what the host registers and what this list documents are the same set.
 */
import { apiDocsRoutes } from './apidocs/routes';
import { consoleRoutes } from './console/routes';
import { countersRoutes } from './counters/routes';
import { gatesRoutes } from './gates/routes';
import { healthRoutes } from './health/routes';
import { jobSettings } from './config';
import type { RouteDefinition } from './http/route';
import { notFoundRoutes } from './http/notFound';
import { jobsRoutes } from './jobs/routes';
import type { TagDoc } from './openapi/document';
import { openApiRoutes } from './openapi/routes';
import { schedulesRoutes } from './schedules/routes';
import { sequencesRoutes } from './sequences/routes';
import { streamsRoutes } from './streams/routes';

function documentationOnly(): never {
  throw new Error('The route catalog is for documentation; its routes have no services');
}

export const capabilityTags: readonly TagDoc[] = [
  {
    name: 'sequences',
    description: 'Short, check-digited order numbers, unique across instances (block allocation with optimistic concurrency).',
  },
  { name: 'counters', description: 'High-rate increments with cheap reads, exact up to a watermark (hit rows or shards plus a rollup).' },
  {
    name: 'gates',
    description: 'Hold pre-warmed workers until an admin or a schedule releases them; late joiners see the release at once.',
  },
  { name: 'schedules', description: 'One-off and recurring (cron, IANA zone) runs with cancel, pause, resume and trigger now.' },
  { name: 'jobs', description: 'Batched queue processing: submit items, watch progress, read results and failures with reasons.' },
  { name: 'streams', description: 'Append events to one log per resource through a single writer, acknowledged when buffered or flushed.' },
  { name: 'operations', description: 'Health, this document, its rendering as a reference page and the admin console.' },
];

export function catalogRoutes(): RouteDefinition[] {
  return [
    ...healthRoutes(documentationOnly),
    ...sequencesRoutes({ service: documentationOnly }),
    ...countersRoutes({ service: documentationOnly }),
    ...gatesRoutes({ service: documentationOnly, waiting: documentationOnly, audit: documentationOnly }),
    ...schedulesRoutes({ service: documentationOnly }),
    ...jobsRoutes({ service: documentationOnly, maxRequestBytes: jobSettings({}).maxRequestBytes }),
    ...streamsRoutes({ service: documentationOnly, durable: documentationOnly }),
    ...openApiRoutes({ routes: catalogRoutes, tags: capabilityTags }),
    ...consoleRoutes({ assets: documentationOnly }),
    ...apiDocsRoutes({ assets: documentationOnly }),
    ...notFoundRoutes(),
  ];
}
