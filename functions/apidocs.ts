/** The API reference page: HTTP registrations only; the page and its assets are served by shared/apidocs. */
import { getApiDocsAssets } from '../shared/apidocs/defaults';
import { apiDocsRoutes } from '../shared/apidocs/routes';
import { registerRoutes } from './_http';

registerRoutes(apiDocsRoutes({ assets: getApiDocsAssets }));
