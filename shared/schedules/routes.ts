/** The schedules HTTP API, defined once (registration, validation and OpenAPI all come from here). */
import type { RouteDefinition } from '../http/route';
import { scheduleCreateRoutes } from './createRoutes';
import { scheduleManageRoutes } from './manageRoutes';
import type { ScheduleRouteDeps } from './routeCommon';

export type { ScheduleRouteDeps } from './routeCommon';

export function schedulesRoutes(deps: ScheduleRouteDeps): RouteDefinition[] {
  return [...scheduleCreateRoutes(deps), ...scheduleManageRoutes(deps)];
}
