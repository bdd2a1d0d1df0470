/**
 * Registers shared route definitions as HTTP functions. Validation, error mapping and problem+json
 * happen in the route itself (shared/http/route.ts); this adapter only binds it to the runtime.
 */
import { app, type HttpRequest, type HttpResponseInit, type InvocationContext } from '@azure/functions';

import { getConfig } from '../shared/config';
import type { RouteDefinition } from '../shared/http/route';
import type { Logger } from '../shared/log';

function invocationLogger(context: InvocationContext): Logger {
  return {
    log(level, event, fields = {}) {
      const line = JSON.stringify({ level, event, ...fields });
      if (level === 'error') context.error(line);
      else if (level === 'warn') context.warn(line);
      else if (level === 'debug') context.debug(line);
      else context.info(line);
    },
  };
}

function maxBodyBytes(): number | undefined {
  try {
    return getConfig().http.maxBodyBytes;
  } catch {
    // A bad setting surfaces as a problem document from the handler's own use of the config.
    return undefined;
  }
}

export async function runRoute(route: RouteDefinition, request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> {
  const limit = maxBodyBytes();
  return route.run(request, { logger: invocationLogger(context), ...(limit === undefined ? {} : { maxBodyBytes: limit }) });
}

export function registerRoutes(routes: readonly RouteDefinition[]): void {
  for (const route of routes) {
    app.http(route.name, {
      methods: [route.method],
      route: route.path,
      authLevel: route.auth,
      handler: (request, context) => runRoute(route, request, context),
    });
  }
}
