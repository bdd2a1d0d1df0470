/**
 * The app folders the cold-start benchmark starts hosts on, prepared under dist/coldstart/:
 * - `tsc`: the app as `npm run build` compiled it before the bundle (issue #39's "today"): one
 *   CommonJS file per source file from `tsc` (tsconfig.json's options, `--noCheck`, so it takes
 *   seconds), its dependencies loaded from node_modules;
 * - `bundle`: the deployment package's layout: dist/app as `npm run build` left it, host.json and a
 *   package.json naming `main`, and no node_modules.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

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
  const built = join(repoRoot, 'dist', 'app');
  if (!existsSync(join(built, 'index.js'))) throw new Error(`${built} is missing: run npm run build`);
  const { root, entry } = appFolder('bundle', 'dist/app/index.js');
  cpSync(built, join(root, 'dist', 'app'), { recursive: true });
  return { name: 'bundle', root, entry };
}

/** npm run build's per-file output (dist/functions), for the load figures only. */
export function esbuildPerFileVariant(): AppVariant {
  return { name: 'per-file (esbuild)', root: repoRoot, entry: join(repoRoot, 'dist', 'functions', 'index.js') };
}
