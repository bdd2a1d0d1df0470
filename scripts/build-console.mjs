// Bundles the admin console (console/, TypeScript + Preact) and the API reference page into content-hashed files under
// dist/app/console-assets/ and dist/app/apidocs-assets/, beside the app bundle that serves them
// (shared/console/assets.ts, shared/apidocs/routes.ts), each with a manifest.json naming the entry
// script and stylesheet. Runs offline: everything comes from node_modules. Part of `npm run build` (scripts/build.mjs).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

import { build } from 'esbuild';

/** What both pages' bundles share: browser ESM, minified, content-hashed names, a metafile to find them. */
const common = {
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  minify: true,
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  tsconfig: 'console/tsconfig.json',
  metafile: true,
  logLevel: 'warning',
};

/** Builds both pages under `root`/dist/app. */
export async function buildConsole(root) {
  const outdir = join(root, 'dist', 'app', 'console-assets');
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    ...common,
    absWorkingDir: root,
    entryPoints: { console: 'console/main.tsx' },
    outdir,
    sourcemap: 'linked',
  });

  const entry = Object.entries(result.metafile.outputs).find(([, output]) => output.entryPoint === 'console/main.tsx');
  if (entry === undefined || entry[1].cssBundle === undefined) throw new Error('esbuild produced no console script and stylesheet');
  const manifest = { script: basename(entry[0]), style: basename(entry[1].cssBundle) };
  writeFileSync(join(outdir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`console: ${manifest.script}, ${manifest.style}`);

  // The API reference page (/api/docs): Swagger UI from swagger-ui-dist and a small start script, bundled
  // the same way into dist/app/apidocs-assets/ (served by the app itself: no CDN, works offline).
  const docsOutdir = join(root, 'dist', 'app', 'apidocs-assets');
  rmSync(docsOutdir, { recursive: true, force: true });
  mkdirSync(docsOutdir, { recursive: true });
  const docsResult = await build({
    ...common,
    absWorkingDir: root,
    entryPoints: { apidocs: 'console/apidocs.ts' },
    outdir: docsOutdir,
    // Swagger UI's bundle reads process.env.NODE_ENV; the browser has no process.
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const docsEntry = Object.entries(docsResult.metafile.outputs).find(([, output]) => output.entryPoint === 'console/apidocs.ts');
  if (docsEntry === undefined || docsEntry[1].cssBundle === undefined)
    throw new Error('esbuild produced no API reference script and stylesheet');
  const docsManifest = { script: basename(docsEntry[0]), style: basename(docsEntry[1].cssBundle) };
  writeFileSync(join(docsOutdir, 'manifest.json'), `${JSON.stringify(docsManifest, null, 2)}\n`);
  console.log(`api reference: ${docsManifest.script}, ${docsManifest.style}`);
}
