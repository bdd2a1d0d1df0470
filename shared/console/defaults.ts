/** The console's assets as built into this deployment, loaded on first use. */
import { builtAssetDirectory, type ConsoleAssets, loadConsoleAssets } from './assets';

let assets: ConsoleAssets | undefined;

export function getConsoleAssets(): ConsoleAssets {
  assets ??= loadConsoleAssets(builtAssetDirectory);
  return assets;
}
