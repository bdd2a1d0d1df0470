/**
 * The API reference (`GET /api/docs`) and its static files, served anonymously: like
 * `/api/openapi.json`, which it renders, it shows only the public contract and holds no data.
 */
import { z } from 'zod';

import type { ConsoleAssets } from '../console/assets';
import { assetCaching, pageCaching, securityHeaders } from '../console/headers';
import { AppError } from '../errors';
import { defineRoute, type RouteDefinition } from '../http/route';
import { problem } from '../http/schemas';
import { apiDocsPage } from './page';

export interface ApiDocsRouteDeps {
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without any I/O. */
  readonly assets: () => ConsoleAssets;
}

const tags = ['operations'];
const assetParams = z.object({
  file: z
    .string()
    .max(100)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'An asset file name')
    .meta({ example: 'apidocs-5KXQ2B7M.js' }),
});

export function apiDocsRoutes(deps: ApiDocsRouteDeps): RouteDefinition[] {
  return [
    defineRoute({
      name: 'apiDocsPage',
      method: 'GET',
      path: 'docs',
      auth: 'anonymous',
      summary: 'The API reference (this document, rendered by Swagger UI)',
      description: 'A web page rendering /api/openapi.json; it holds no data and calls nothing but that document.',
      tags,
      responses: {
        200: { description: 'The page', contentType: 'text/html' },
        500: problem('The API reference assets were not built into the package'),
      },
      handle: ({ url }) => {
        const { entry } = deps.assets();
        const base = url.pathname.replace(/\/+$/, '');
        const page = apiDocsPage({
          script: `${base}/assets/${entry.script}`,
          style: `${base}/assets/${entry.style}`,
          document: `${base.replace(/\/docs$/, '')}/openapi.json`,
        });
        return Promise.resolve({
          status: 200,
          headers: { 'content-type': 'text/html; charset=utf-8', ...pageCaching, ...securityHeaders },
          body: page,
        });
      },
    }),
    defineRoute({
      name: 'apiDocsAsset',
      method: 'GET',
      path: 'docs/assets/{file}',
      auth: 'anonymous',
      summary: 'A static file of the API reference (content-hashed, cached for a year)',
      tags,
      params: assetParams,
      responses: {
        200: { description: 'The file', contentType: 'application/octet-stream' },
        400: problem('Not an asset file name'),
        404: problem('No such asset'),
      },
      handle: ({ params }) => {
        const asset = deps.assets().get(params.file);
        if (asset === undefined) throw new AppError('NotFound', `The API reference has no asset "${params.file}"`);
        return Promise.resolve({
          status: 200,
          headers: { 'content-type': asset.contentType, ...assetCaching, ...securityHeaders },
          body: asset.body,
        });
      },
    }),
  ];
}
