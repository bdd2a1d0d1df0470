/**
 * Registers the app's route list (shared/app/routes.ts) as HTTP functions. Validation, error mapping
 * and problem+json happen in the route itself (shared/http/route.ts); this adapter only binds it to
 * the runtime: a route that declares `durable` gets a `durableClient` input, and its handler the
 * invocation's client.
 */
import { app, type HttpMethod, type HttpRequest, type HttpResponseInit, type InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';

import type { DurableClient } from '../shared/durable/client';
import { watchClient } from '../shared/http/clientGone';
import { hostAuthLevel } from '../shared/http/authorization';
import type { RouteDefinition } from '../shared/http/route';
import { callerResolverFor } from '../shared/identity/resolvers';
import type { Logger } from '../shared/log';
import { registration, theApp } from './_app';
import { durableClientOf } from './_durable';

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

/** The app-wide body limit; a bad setting surfaces as a problem document from the handler's own use of the app. */
function maxBodyBytes(): number | undefined {
  try {
    return theApp().config.http.maxBodyBytes;
  } catch {
    return undefined;
  }
}

/** The invocation's Durable client, for a route that declares one (built when the handler asks for it). */
function durableOf(route: RouteDefinition, context: InvocationContext): (() => DurableClient) | undefined {
  if (route.durable !== true) return undefined;
  let client: DurableClient | undefined;
  return () => (client ??= durableClientOf(context));
}

/** Records the answer (http.server.request.duration); without an app (a bad setting) there is nowhere to record it. */
function answered(route: RouteDefinition, request: HttpRequest, status: number, started: number): void {
  try {
    theApp().requests.answered(route.path, request.method, status, (performance.now() - started) / 1000);
  } catch {
    // The problem document already says why the app is not there.
  }
}

async function runRoute(route: RouteDefinition, request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> {
  const started = performance.now();
  const limit = maxBodyBytes();
  const durable = durableOf(route, context);
  const client = watchClient(context.invocationId);
  try {
    const result = await route.run(request, {
      logger: invocationLogger(context),
      clientGone: client.signal,
      callers: () => callerResolverFor(theApp().config.identity, process.env, theApp().callers.isRevoked),
      held: () => theApp().held,
      ...(limit === undefined ? {} : { maxBodyBytes: limit }),
      ...(durable === undefined ? {} : { durable }),
    });
    answered(route, request, result.status, started);
    // A streamed body goes on after the handler: its watch ends with the response.
    if (!(result.body instanceof ReadableStream)) client.release();
    return result;
  } catch (err) {
    client.release();
    throw err;
  }
}

/**
 * What an `anyMethod` route registers: every method but CONNECT (a proxy tunnel, never an API call)
 * and TRACE, which the real host cannot hand a stream-mode worker (it answered nothing, or 500):
 * unregistered, it is the host's 404 (devhost/docs/real-host.md#routing).
 */
const everyMethod: HttpMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

export function registerRoutes(routes: readonly RouteDefinition[]): void {
  for (const route of routes) {
    app.http(route.name, {
      methods: route.anyMethod === true ? everyMethod : [route.method],
      route: route.path,
      authLevel: hostAuthLevel(route.auth, registration.identity.mode),
      ...(route.durable === true ? { extraInputs: [df.input.durableClient()] } : {}),
      handler: (request, context) => runRoute(route, request, context),
    });
  }
}
