/** The admin console: an HTML shell and its hashed static assets, served anonymously (they hold no data). */
import { z } from 'zod';

import { AppError } from '../errors';
import { defineRoute, type RouteDefinition } from '../http/route';
import { problem } from '../http/schemas';
import type { ConsoleAssets } from './assets';
import { assetCaching, pageCaching, securityHeaders } from './headers';
import { consolePage } from './page';

export interface ConsoleRouteDeps {
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without any I/O. */
  readonly assets: () => ConsoleAssets;
}

const tags = ['operations'];
const assetParams = z.object({
  file: z
    .string()
    .max(100)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'An asset file name')
    .meta({ example: 'console-5KXQ2B7M.js' }),
});

export function consoleRoutes(deps: ConsoleRouteDeps): RouteDefinition[] {
  return [
    defineRoute({
      name: 'consolePage',
      method: 'GET',
      path: 'console',
      summary: 'The admin console (a web page for operators)',
      description:
        'The page holds no data: it asks for the admin key (kept for the browser session) and calls this API with it. ' +
        'Served with a strict Content-Security-Policy.',
      tags,
      responses: {
        200: { description: 'The page', contentType: 'text/html' },
        500: problem('The console assets were not built into the package'),
      },
      handle: ({ url }) => {
        const { entry } = deps.assets();
        const base = url.pathname.replace(/\/+$/, '');
        const page = consolePage({
          script: `${base}/assets/${entry.script}`,
          style: `${base}/assets/${entry.style}`,
          apiBase: base.replace(/\/console$/, ''),
        });
        return Promise.resolve({
          status: 200,
          headers: { 'content-type': 'text/html; charset=utf-8', ...pageCaching, ...securityHeaders },
          body: page,
        });
      },
    }),
    defineRoute({
      name: 'consoleAsset',
      method: 'GET',
      path: 'console/assets/{file}',
      summary: 'A static file of the admin console (content-hashed, cached for a year)',
      tags,
      params: assetParams,
      responses: {
        200: { description: 'The file', contentType: 'application/octet-stream' },
        400: problem('Not an asset file name'),
        404: problem('No such asset'),
      },
      handle: ({ params }) => {
        const asset = deps.assets().get(params.file);
        if (asset === undefined) throw new AppError('NotFound', `The console has no asset "${params.file}"`);
        return Promise.resolve({
          status: 200,
          headers: { 'content-type': asset.contentType, ...assetCaching, ...securityHeaders },
          body: asset.body,
        });
      },
    }),
  ];
}
