/**
 * Registers shared route definitions as HTTP functions. Validation, error mapping and problem+json
 * happen in the route itself (shared/http/route.ts); this adapter only binds it to the runtime.
 */
import {
  app,
  type FunctionInput,
  type HttpMethod,
  type HttpRequest,
  type HttpResponseInit,
  type InvocationContext,
} from '@azure/functions';

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

export async function runRoute(
  route: RouteDefinition,
  request: HttpRequest,
  context: InvocationContext,
  bodyLimit: number | undefined = undefined,
): Promise<HttpResponseInit> {
  const limit = bodyLimit ?? maxBodyBytes();
  return route.run(request, { logger: invocationLogger(context), ...(limit === undefined ? {} : { maxBodyBytes: limit }) });
}

export interface RegisterOptions {
  /** Input bindings every route of the list gets, e.g. `df.input.durableClient()`. */
  readonly extraInputs?: FunctionInput[];
  /** Runs before each request with its invocation context, e.g. to take the Durable client from it. */
  readonly before?: (context: InvocationContext) => void;
  /** Replaces the app-wide TALLYHO_MAX_BODY_BYTES for these routes (an endpoint that takes bulk input). */
  readonly maxBodyBytes?: number;
}

/** What an `anyMethod` route registers: every method but CONNECT (a proxy tunnel, never an API call). */
const everyMethod: HttpMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

export function registerRoutes(routes: readonly RouteDefinition[], options: RegisterOptions = {}): void {
  for (const route of routes) {
    app.http(route.name, {
      methods: route.anyMethod === true ? everyMethod : [route.method],
      route: route.path,
      authLevel: route.auth,
      ...(options.extraInputs === undefined ? {} : { extraInputs: options.extraInputs }),
      handler: (request, context) => {
        options.before?.(context);
        return runRoute(route, request, context, options.maxBodyBytes);
      },
    });
  }
}
