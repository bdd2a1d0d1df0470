/** The OpenAPI document, generated from the route list, and its route. */
export type { TagDoc } from './document';
export { openApiRoutes } from './routes';
