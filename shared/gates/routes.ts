/** The gates HTTP API, defined once (registration, validation and OpenAPI all come from here). */
import type { RouteDefinition } from '../http/route';
import { gatesCreateRoute, gatesReleaseRoute, gatesResetRoute } from './commandRoutes';
import { gatesAuditRoute, gatesGetRoute, gatesListRoute } from './readRoutes';
import type { GateRouteDeps } from './routeCommon';
import { gatesRunStatusRoute, gatesStartRunRoute } from './runRoutes';
import { gatesEventsRoute, gatesWaitRoute } from './watchRoutes';

export type { GateRouteDeps } from './routeCommon';

export function gatesRoutes(deps: GateRouteDeps): RouteDefinition[] {
  return [
    gatesCreateRoute(deps),
    gatesListRoute(deps),
    gatesGetRoute(deps),
    gatesReleaseRoute(deps),
    gatesResetRoute(deps),
    gatesWaitRoute(deps),
    gatesEventsRoute(deps),
    gatesStartRunRoute(deps),
    gatesRunStatusRoute(deps),
    gatesAuditRoute(deps),
  ];
}
