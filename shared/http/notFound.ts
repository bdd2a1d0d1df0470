/**
 * The catch-all: every request under the route prefix that no other function serves (an unknown
 * path, one that `..` normalisation turned into an unknown one, or a known path with another method)
 * gets a 404 problem document instead of the host's empty 404.
 *
 * It must come after every other route. The HTTP extension orders function routes by specificity
 * before adding them to its ASP.NET Core RouteCollection (azure-webjobs-sdk-extensions
 * WebJobsRouteBuilder.Build sorts by RouteComparison: literal segments before parameters, longer
 * templates before shorter), so `{*path}`, a single parameter segment, follows every route that
 * starts with a literal, as in the devhost. Older builds of the extension mapped routes in the host's
 * function order, which is by name; `zzNotFound` sorts after every other name, so it is last in that
 * order too (a unit test checks).
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
