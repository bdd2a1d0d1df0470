/** Health: HTTP registration only; the checks live in shared/health. */
import { defaultHealthDeps } from '../shared/health/defaults';
import { healthRoutes } from '../shared/health/routes';
import { registerRoutes } from './_http';

registerRoutes(healthRoutes(defaultHealthDeps));
