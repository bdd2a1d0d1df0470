/**
 * A web page and its content-hashed static files as two anonymous routes (`<path>` and
 * `<path>/assets/{file}`): the shape shared by the admin console and the API reference. The page is
 * served with no-cache, the files for a year, both under the strict security headers.
 */
import * as z from 'zod';

import { AppError } from '../errors';
import { defineRoute, type RouteDefinition } from '../http/route';
import { routeUrlPath } from '../http/routeTemplate';
import { problem } from '../http/schemas';
import type { ConsoleAssets } from './assets';
import { assetCaching, pageCaching, securityHeaders } from './headers';

export interface StaticPageSpec {
  /** Function names: `<name>Page` and `<name>Asset`, both entered in the authorization table. */
  readonly name: 'console' | 'apiDocs';
  /** Route of the page below the `api` prefix, e.g. `console`. */
  readonly path: string;
  /** What the page is, e.g. "the admin console", for summaries and problems. */
  readonly title: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  /** An asset name for the OpenAPI example. */
  readonly exampleAsset: string;
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without any I/O. */
  readonly assets: () => ConsoleAssets;
  /** The page's HTML, given the URL path of its route (e.g. `/api/console`) and the assets. */
  readonly render: (servedAt: string, entry: ConsoleAssets['entry']) => string;
}

export function staticPageRoutes(spec: StaticPageSpec): RouteDefinition[] {
  const assetParams = z.object({
    file: z
      .string()
      .max(100)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'An asset file name')
      .meta({ example: spec.exampleAsset }),
  });
  return [
    defineRoute({
      name: `${spec.name}Page`,
      method: 'GET',
      path: spec.path,
      summary: spec.summary,
      ...(spec.description === undefined ? {} : { description: spec.description }),
      tags: spec.tags,
      responses: {
        200: { description: 'The page', contentType: 'text/html' },
        500: problem(`The assets of ${spec.title} were not built into the package`),
      },
      handle: () => {
        const { entry } = spec.assets();
        return Promise.resolve({
          status: 200,
          headers: { 'content-type': 'text/html; charset=utf-8', ...pageCaching, ...securityHeaders },
          // From the route, not the request path (routeUrlPath says why).
          body: spec.render(routeUrlPath(spec.path), entry),
        });
      },
    }),
    defineRoute({
      name: `${spec.name}Asset`,
      method: 'GET',
      path: `${spec.path}/assets/{file}`,
      summary: `A static file of ${spec.title} (content-hashed, cached for a year)`,
      tags: spec.tags,
      params: assetParams,
      responses: {
        200: { description: 'The file', contentType: 'application/octet-stream' },
        400: problem('Not an asset file name'),
        404: problem('No such asset'),
      },
      handle: ({ params }) => {
        const asset = spec.assets().get(params.file);
        if (asset === undefined) throw new AppError('NotFound', `${capitalized(spec.title)} has no asset "${params.file}"`);
        return Promise.resolve({
          status: 200,
          headers: { 'content-type': asset.contentType, ...assetCaching, ...securityHeaders },
          body: asset.body,
        });
      },
    }),
  ];
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
