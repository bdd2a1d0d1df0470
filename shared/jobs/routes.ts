/** The jobs HTTP API, defined once (registration, validation and OpenAPI all come from here). */
import type { RouteDefinition } from '../http/route';
import { jobsFailuresRoute, jobsFileRoute, jobsResultsRoute } from './resultRoutes';
import type { JobRouteDeps } from './routeCommon';
import { jobsGetRoute, jobsListRoute, jobsRetryFailedRoute, jobsSubmitRoute } from './submitRoutes';

export type { JobRouteDeps } from './routeCommon';

export function jobsRoutes(deps: JobRouteDeps): RouteDefinition[] {
  return [
    jobsSubmitRoute(deps),
    jobsListRoute(deps),
    jobsGetRoute(deps),
    jobsResultsRoute(deps),
    jobsFailuresRoute(deps),
    jobsRetryFailedRoute(deps),
    jobsFileRoute(deps),
  ];
}
