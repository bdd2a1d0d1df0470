/**
 * The app folders the cold-start benchmark starts hosts on, prepared under dist/coldstart/:
 * - `tsc`: the app as `npm run build` compiled it before the bundle (issue #39's "today"): one
 *   CommonJS file per source file from `tsc` (tsconfig.json's options, `--noCheck`, so it takes
 *   seconds), its dependencies loaded from node_modules;
 * - `bundle`: the deployment package's layout: dist/app as `npm run build` left it, host.json and a
 *   package.json naming `main`, and no node_modules;
 * - `bundle, no code cache`: the same without the code cache the build made (tallyho.js.cache), so
 *   the entry compiles the bundle from its source, as a Node whose V8 differs from the build's does;
 * - `bundle (11-28)`: the bundle as it was before its second pass (issue #39), built here from
 *   today's sources: all of zod kept (the named `z` import did that), durable-functions' axios,
 *   moment and validator loaded at start (no `deferredModules`), the regular expressions' characters
 *   as written (`ascii` off), and no code cache.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import type { Plugin } from 'esbuild';

export interface AppVariant {
  readonly name: string;
  /** The app folder (package.json, host.json, the code). */
  readonly root: string;
  /** The file package.json `main` names. */
  readonly entry: string;
}

const repoRoot = resolve(__dirname, '..', '..', '..');

function appFolder(name: string, main: string): { root: string; entry: string } {
  const root = join(repoRoot, 'dist', 'coldstart', name);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'package.json'), `${JSON.stringify({ name: `tallyho-${name}`, private: true, main }, null, 2)}\n`);
  writeFileSync(join(root, 'host.json'), readFileSync(join(repoRoot, 'host.json')));
  return { root, entry: join(root, main) };
}

/** Today's per-file build, compiled here by tsc into dist/coldstart/tsc/dist. */
export function tscVariant(): AppVariant {
  const { root, entry } = appFolder('tsc', 'dist/functions/index.js');
  const config = {
    extends: '../../../tsconfig.json',
    compilerOptions: { rootDir: '../../..', outDir: 'dist', noEmit: false, types: ['node'] },
    include: ['../../../functions', '../../../shared'],
    exclude: ['../../../**/*.test.ts'],
  };
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify(config, null, 2));
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(root, 'tsconfig.json'), '--noCheck'], {
    encoding: 'utf8',
  });
  if (tsc.status !== 0 || !existsSync(entry)) throw new Error(`tsc of the per-file build failed:\n${tsc.stdout}${tsc.stderr}`);
  // A host serves a copy of the folder (devhost/realHost/appCopy.ts), which finds node_modules through this link.
  symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'), 'dir');
  return { name: 'per-file (tsc)', root, entry };
}

/** The bundle `npm run build` made, laid out as the deployment package. */
export function bundleVariant(): AppVariant {
  return { name: 'bundle', ...builtBundleFolder('bundle', { codeCache: true }) };
}

/** dist/app as `npm run build` left it, copied into an app folder of its own, with its code cache made for the copy or without one. */
function builtBundleFolder(name: string, { codeCache }: { codeCache: boolean }): { root: string; entry: string } {
  const built = join(repoRoot, 'dist', 'app');
  if (!existsSync(join(built, 'index.js'))) throw new Error(`${built} is missing: run npm run build`);
  const folder = appFolder(name, 'dist/app/index.js');
  cpSync(built, join(folder.root, 'dist', 'app'), { recursive: true, filter: (path) => codeCache || !path.endsWith('.cache') });
  cacheForCopy(folder.root);
  return folder;
}

/**
 * Remakes the code cache of a copied app's bundle for the copy's path, when it has one: a cache
 * serves the path it was made for (scripts/app-entry.cjs), and a copy would otherwise compile its source.
 */
export function cacheForCopy(appDir: string): void {
  const folder = join(appDir, 'dist', 'app');
  if (!existsSync(join(folder, 'tallyho.js.cache'))) return;
  const made = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'build-app.mjs'), 'code-cache', folder, folder], {
    encoding: 'utf8',
  });
  if (made.status !== 0) throw new Error(`remaking the code cache of ${folder} failed:\n${made.stderr}`);
}

/** The bundle `npm run build` made, without its code cache. */
export function bundleWithoutCacheVariant(): AppVariant {
  return { name: 'bundle, no code cache', ...builtBundleFolder('bundle-no-cache', { codeCache: false }) };
}

/** npm run build's per-file output (dist/functions), for the load figures only. */
export function esbuildPerFileVariant(): AppVariant {
  return { name: 'per-file (esbuild)', root: repoRoot, entry: join(repoRoot, 'dist', 'functions', 'index.js') };
}

interface AppBuild {
  buildApp(
    root: string,
    options: { outdir: string; deferModules: boolean; ascii: boolean; codeCache: boolean; plugins: Plugin[] },
  ): Promise<void>;
}

/**
 * Keeps every export of zod in the bundle, as the named `z` import (a namespace re-export the
 * bundler could not see through) did: the app's `zod` imports go through a module that hands the
 * whole namespace to a global.
 */
const wholeZod: Plugin = {
  name: 'whole-zod',
  setup(b) {
    b.onResolve({ filter: /^zod$/ }, (args) =>
      args.namespace === 'whole-zod' || args.importer.includes('node_modules') ? undefined : { path: 'zod', namespace: 'whole-zod' },
    );
    b.onLoad({ filter: /.*/, namespace: 'whole-zod' }, () => ({
      contents: "import * as all from 'zod'; export * from 'zod'; globalThis[Symbol.for('bench.wholeZod')] = all;",
      resolveDir: repoRoot,
      loader: 'js',
    }));
  },
};

/** The bundle before its second pass, built by scripts/build-app.mjs into dist/coldstart/bundle-11-28. */
export async function bundleBeforeVariant(): Promise<AppVariant> {
  const { root, entry } = appFolder('bundle-11-28', 'dist/app/index.js');
  const { buildApp } = (await import(pathToFileURL(join(repoRoot, 'scripts', 'build-app.mjs')).href)) as AppBuild;
  await buildApp(repoRoot, { outdir: join(root, 'dist', 'app'), deferModules: false, ascii: false, codeCache: false, plugins: [wholeZod] });
  return { name: 'bundle (11-28)', root, entry };
}
