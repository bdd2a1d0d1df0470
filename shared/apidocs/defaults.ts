/** The API reference's assets as built into this deployment (scripts/build-console.mjs), loaded on first use. */
import { join } from 'node:path';

import { type ConsoleAssets, loadConsoleAssets } from '../console/assets';

let assets: ConsoleAssets | undefined;

export function getApiDocsAssets(): ConsoleAssets {
  // Same layout as the console's: hashed files and a manifest naming the script and stylesheet.
  assets ??= loadConsoleAssets(join(__dirname, 'assets'));
  return assets;
}
