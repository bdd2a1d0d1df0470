/** The jobs HTTP API, defined once (registration, validation and OpenAPI all come from here). */
import type { RouteDefinition } from '../../http/route';
import { jobsFileRoute, jobsResultsRoutes } from './resultRoutes';
import type { JobRouteDeps } from './routeCommon';
import { jobsCancelRoute, jobsFiguresRoute, jobsGetRoute, jobsListRoute, jobsRetryFailedRoute, jobsSubmitRoute } from './submitRoutes';
import { leasesCompleteRoute, leasesExtendRoute, leasesTakeRoute } from './leaseRoutes';
import { processorsDeclareRoute, processorsGetRoute, processorsListRoute, processorsRotateSecretRoute } from './processorRoutes';

export type { JobRouteDeps } from './routeCommon';

export function jobsRoutes(deps: JobRouteDeps): RouteDefinition[] {
  return [
    jobsSubmitRoute(deps),
    jobsListRoute(deps),
    jobsFiguresRoute(deps),
    jobsGetRoute(deps),
    ...jobsResultsRoutes(deps),
    jobsRetryFailedRoute(deps),
    jobsFileRoute(deps),
    jobsCancelRoute(deps),
    processorsDeclareRoute(deps),
    processorsListRoute(deps),
    processorsGetRoute(deps),
    processorsRotateSecretRoute(deps),
    leasesTakeRoute(deps),
    leasesExtendRoute(deps),
    leasesCompleteRoute(deps),
  ];
}
