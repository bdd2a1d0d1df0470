/** The API reference page (the OpenAPI document, rendered). */
export { apiDocsAssetDirectory, apiDocsRoutes } from './routes';
