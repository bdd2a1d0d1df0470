/** The OpenAPI document: HTTP registration only; it is generated from the route catalog (shared/catalog.ts). */
import { capabilityTags, catalogRoutes } from '../shared/catalog';
import { openApiRoutes } from '../shared/openapi/routes';
import { registerRoutes } from './_http';

registerRoutes(openApiRoutes({ routes: catalogRoutes, tags: capabilityTags }));
