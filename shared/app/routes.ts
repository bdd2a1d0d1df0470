/**
 * Every HTTP route of the app, in one list: functions/ registers it, and the OpenAPI document is
 * generated from it (a test checks that what the host registers and what the document describes
 * are the same set). The routes reach the app lazily, so the list is built when the app loads —
 * before any setting beyond the registration's is read — and without any I/O.
 */
import { apiDocsAssetDirectory, apiDocsRoutes } from '../apidocs';
import { callersRoutes } from '../callers';
import { systemClock } from '../clock';
import { builtAssetDirectory, type ConsoleAssets, loadConsoleAssets, consoleRoutes } from '../console';
import { countersRoutes } from '../counters';
import { gatesRoutes } from '../gates';
import { healthRoutes } from '../health';
import { notFoundRoutes, type RouteDefinition } from '../http';
import { jobsRoutes } from '../jobs';
import { type TagDoc, openApiRoutes } from '../openapi';
import { schedulesRoutes } from '../schedules';
import { sequencesRoutes } from '../sequences';
import { streamsRoutes } from '../streams';
import type { App } from './createApp';
import { processorInfos } from './processors';
import { registrationSettings, type RegistrationSettings } from './settings';

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

/** Loads a page's built assets on first use (a package without them answers a 500 that says to build). */
function assetsOnce(directory: string): () => ConsoleAssets {
  let assets: ConsoleAssets | undefined;
  return () => (assets ??= loadConsoleAssets(directory));
}

export function appRoutes(app: () => App, settings: Pick<RegistrationSettings, 'jobs'>): RouteDefinition[] {
  const routes: RouteDefinition[] = [
    ...healthRoutes(() => ({ config: () => app().config, storage: () => app().storage, clock: systemClock })),
    ...sequencesRoutes({ service: () => app().sequences }),
    ...countersRoutes({ service: () => app().counters }),
    ...gatesRoutes({ gates: () => app().gates }),
    ...schedulesRoutes({ service: (client) => app().schedules.service(client) }),
    ...jobsRoutes({
      jobs: () => app().jobs,
      maxRequestBytes: settings.jobs.maxRequestBytes,
      processors: processorInfos,
      queuePrefix: settings.jobs.queuePrefix,
    }),
    ...streamsRoutes({ service: () => app().streams.service }),
    ...callersRoutes({
      registry: () => app().callers.registry,
      openJobsOf: (id) => app().jobs.openJobsOf(id),
      heldOf: (id) => app().held.held(id),
      now: () => systemClock.now(),
    }),
    ...openApiRoutes({ routes: () => routes, tags: capabilityTags }),
    ...consoleRoutes({ assets: assetsOnce(builtAssetDirectory) }),
    ...apiDocsRoutes({ assets: assetsOnce(apiDocsAssetDirectory) }),
    ...notFoundRoutes(),
  ];
  return routes;
}

function documentationOnly(): never {
  throw new Error('This route list is for documentation; it has no app');
}

/** The list with the default settings and no app: for the OpenAPI document's tests and generators. */
export function documentedRoutes(): RouteDefinition[] {
  return appRoutes(documentationOnly, registrationSettings({}));
}
