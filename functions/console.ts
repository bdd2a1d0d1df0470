/** The admin console: HTTP registrations only; the page and its assets are served by shared/console. */
import { getConsoleAssets } from '../shared/console/defaults';
import { consoleRoutes } from '../shared/console/routes';
import { registerRoutes } from './_http';

registerRoutes(consoleRoutes({ assets: getConsoleAssets }));
