/** The streams HTTP API, defined once (registration, validation and OpenAPI all come from here). */
import type { RouteDefinition } from '../http/route';
import { streamsGetRoutes, streamsListRoute } from './readRoutes';
import type { StreamRouteDeps } from './routeCommon';
import { streamsAppendRoute, streamsFlushRoute, streamsRemapRoute } from './writeRoutes';

export type { StreamRouteDeps } from './routeCommon';

export function streamsRoutes(deps: StreamRouteDeps): RouteDefinition[] {
  return [streamsAppendRoute(deps), streamsListRoute(deps), ...streamsGetRoutes(deps), streamsRemapRoute(deps), streamsFlushRoute(deps)];
}
