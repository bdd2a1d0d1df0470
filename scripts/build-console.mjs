// Bundles the admin console (console/, TypeScript + Preact) into content-hashed files under
// dist/shared/console/assets/, beside the compiled module that serves them, plus manifest.json naming
// the entry script and stylesheet. Runs offline: everything comes from node_modules.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'shared', 'console', 'assets');

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: { console: 'console/main.tsx' },
  outdir,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  minify: true,
  sourcemap: 'linked',
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  tsconfig: 'console/tsconfig.json',
  metafile: true,
  logLevel: 'warning',
});

const entry = Object.entries(result.metafile.outputs).find(([, output]) => output.entryPoint === 'console/main.tsx');
if (entry === undefined || entry[1].cssBundle === undefined) throw new Error('esbuild produced no console script and stylesheet');
const manifest = { script: basename(entry[0]), style: basename(entry[1].cssBundle) };
writeFileSync(join(outdir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`console: ${manifest.script}, ${manifest.style}`);
