/**
 * The API reference (`GET /api/docs`) and its static files, served anonymously: like
 * `/api/openapi.json`, which it renders, it shows only the public contract and holds no data.
 */
import { join } from 'node:path';

import type { ConsoleAssets } from '../console/assets';
import { staticPageRoutes } from '../console/staticRoutes';
import type { RouteDefinition } from '../http/route';
import { apiDocsPage } from './page';

/** Where the build puts the page's hashed files and their manifest (scripts/build-console.mjs): beside the app bundle, as for the console. */
export const apiDocsAssetDirectory = join(__dirname, 'apidocs-assets');

export interface ApiDocsRouteDeps {
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without any I/O. */
  readonly assets: () => ConsoleAssets;
}

export function apiDocsRoutes(deps: ApiDocsRouteDeps): RouteDefinition[] {
  return staticPageRoutes({
    name: 'apiDocs',
    path: 'docs',
    title: 'the API reference',
    summary: 'The API reference (this document, rendered by Swagger UI)',
    description: 'A web page rendering /api/openapi.json; it holds no data and calls nothing but that document.',
    tags: ['operations'],
    exampleAsset: 'apidocs-5KXQ2B7M.js',
    assets: deps.assets,
    render: (base, entry) =>
      apiDocsPage({
        script: `${base}/assets/${entry.script}`,
        style: `${base}/assets/${entry.style}`,
        document: `${base.replace(/\/docs$/, '')}/openapi.json`,
      }),
  });
}
