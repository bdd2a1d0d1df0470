/**
 * The console's static files, built by `npm run build` (scripts/build-console.mjs) into
 * `dist/app/console-assets/` beside the app bundle that holds this module, so the deployment package
 * that carries the bundle carries them too. File names hold a content hash, so they can be cached
 * forever; `manifest.json` names the entry script and stylesheet.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

import * as z from 'zod';

import { AppError } from '../errors';

interface Asset {
  readonly body: Uint8Array;
  readonly contentType: string;
}

export interface ConsoleAssets {
  /** The hashed file names of the entry script and stylesheet. */
  readonly entry: { readonly script: string; readonly style: string };
  get(file: string): Asset | undefined;
}

const contentTypes: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

const manifestSchema = z.object({ script: z.string(), style: z.string() });

/** Reads every asset into memory once; they are a few tens of kilobytes. */
export function loadConsoleAssets(directory: string): ConsoleAssets {
  let manifest: z.infer<typeof manifestSchema>;
  try {
    manifest = manifestSchema.parse(JSON.parse(readFileSync(join(directory, 'manifest.json'), 'utf8')));
  } catch (err) {
    throw new AppError('ConfigurationInvalid', 'The console assets are missing or incomplete; run `npm run build`', { cause: err });
  }
  const files = new Map<string, Asset>();
  for (const file of readdirSync(directory)) {
    const contentType = contentTypes[extname(file)];
    if (contentType !== undefined) files.set(file, { body: readFileSync(join(directory, file)), contentType });
  }
  return { entry: manifest, get: (file) => files.get(file) };
}

/**
 * Where the build puts the assets, beside the bundle (dist/app/) this module is compiled into. Named
 * for the console, since the API reference page's files lie beside the same bundle.
 */
export const builtAssetDirectory = join(__dirname, 'console-assets');
