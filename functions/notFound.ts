/** The catch-all 404 (shared/http/notFound.ts): HTTP registration only. */
import { notFoundRoutes } from '../shared/http/notFound';
import { registerRoutes } from './_http';

registerRoutes(notFoundRoutes());
