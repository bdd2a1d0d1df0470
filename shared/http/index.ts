/** HTTP: how a route is defined, validated and answered (shared/http/route.ts); what the app's root uses of it. */
export { HeldRequests } from './held';
export { type RequestMetrics, requestMetricsOf } from './metrics';
export { notFoundRoutes } from './notFound';
export type { RouteDefinition } from './route';
