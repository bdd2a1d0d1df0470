/** The admin console: an HTML shell and its hashed static assets, served anonymously (they hold no data). */
import type { RouteDefinition } from '../http/route';
import type { ConsoleAssets } from './assets';
import { consolePage } from './page';
import { staticPageRoutes } from './staticRoutes';

export interface ConsoleRouteDeps {
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without any I/O. */
  readonly assets: () => ConsoleAssets;
}

export function consoleRoutes(deps: ConsoleRouteDeps): RouteDefinition[] {
  return staticPageRoutes({
    name: 'console',
    path: 'console',
    title: 'the console',
    summary: 'The admin console (a web page for operators)',
    description:
      'The page holds no data: it asks for the admin key (kept for the browser session) and calls this API with it. ' +
      'Served with a strict Content-Security-Policy.',
    tags: ['operations'],
    exampleAsset: 'console-5KXQ2B7M.js',
    assets: deps.assets,
    render: (base, entry) =>
      consolePage({
        script: `${base}/assets/${entry.script}`,
        style: `${base}/assets/${entry.style}`,
        apiBase: base.replace(/\/console$/, ''),
      }),
  });
}
