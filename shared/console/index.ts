/** The admin console: its page and built assets. */
export { builtAssetDirectory, type ConsoleAssets, loadConsoleAssets } from './assets';
export { consoleRoutes } from './routes';
