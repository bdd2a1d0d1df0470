/**
 * The catch-all: every request under the route prefix that no other function serves (an unknown
 * path, one that `..` normalisation turned into an unknown one, or a known path with another method)
 * gets a 404 problem document instead of the host's empty 404.
 *
 * Its name decides whether it works on the real host. The host registers HTTP routes in function-name
 * order (azure-functions-host FunctionMetadataManager.LoadFunctionMetadata sorts by name,
 * OrdinalIgnoreCase; WebScriptHostHttpRoutesManager maps them in that order) into an ASP.NET Core
 * RouteCollection, which takes the first route that matches: template specificity plays no part
 * (azure-functions-host#9876). A `{*path}` route named before another function would answer that
 * function's requests. Hence `zzNotFound`, which sorts after every other name (a unit test checks).
 *
 * A route whose method constraint fails does not match (dotnet/aspnetcore RouteBase.RouteAsync returns
 * without a handler when RouteConstraintMatcher.Match fails), so RouteCollection.RouteAsync tries the
 * next route: a wrong method on a known path reaches the catch-all, which is why the host's own answer
 * was 404. (Recent hosts also map a HEAD-only route answering 405 right after each function that takes
 * neither GET nor HEAD; it precedes the catch-all the same way.)
 * `/admin/*` never reaches function routes (WebJobsRouter.RouteAsync returns before routing it), and
 * `/runtime/webhooks/*` lies outside the `api` prefix the template sits under.
 */
import { AppError } from '../errors';
import { authorizationOf } from './authorization';
import { problemResult } from './responses';
import type { RouteDefinition } from './route';
import { problem } from './schemas';

export function notFoundRoutes(): RouteDefinition[] {
  return [
    {
      name: 'zzNotFound',
      method: 'GET',
      anyMethod: true,
      path: '{*path}',
      summary: 'Anything no other route serves: 404',
      tags: ['operations'],
      responses: { 404: problem('No endpoint answers this method and path') },
      auth: authorizationOf('zzNotFound').level,
      schemas: {},
      run(request) {
        // The body is never read and the query never echoed: the answer names only the method and path.
        const path = new URL(request.url).pathname;
        const method = request.method.toUpperCase();
        return Promise.resolve(problemResult(new AppError('NotFound', `No endpoint answers ${method} ${path}`), path));
      },
    },
  ];
}
