// `npm run build`: everything `npm start`, the tests and the benchmarks load, transpiled by esbuild in
// a few seconds. Types are not checked here: that is `npm run typecheck` (tsc), which `npm test`, CI
// and `npm run deploy` run. Every TypeScript file is written with isolatedModules, so each one
// transpiles on its own.
//
//   dist/{functions,shared,docgen,devhost,bench}/   one CommonJS file per source file, with source maps
//                                            (the devhost, the benchmarks, the scripts/*-sync.mjs tools;
//                                            docgen/ only for those tools, never in the app's bundle)
//   dist/devhost/{cli,start}.js              the devhost's commands, bundled (scripts/build-devhost.mjs)
//   dist/app/                                the app, bundled: what every host loads (scripts/build-app.mjs)
//   clients/typescript/dist/                 the TypeScript client's ES modules (the benchmarks and tests
//                                            load it); its .d.ts come from its own `npm run build` (tsc),
//                                            which `npm pack` runs
//   dist/app/{console,apidocs}-assets/       the console and API reference pages (scripts/build-console.mjs)
import { rmSync } from 'node:fs';
import { join } from 'node:path';

import { build } from 'esbuild';
import { globSync } from 'tinyglobby';

import { buildApp } from './build-app.mjs';
import { buildConsole } from './build-console.mjs';
import { buildDevhostCommands } from './build-devhost.mjs';

const root = join(import.meta.dirname, '..');
const started = performance.now();

/** One output file per input, nothing bundled: the layout tsc gave (`rootDir` `.`, `outDir` dist). */
const transpile = {
  bundle: false,
  sourcemap: true,
  sourcesContent: false,
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  absWorkingDir: root,
};

// Three of the tests' helpers serve the benchmarks too: the push benchmark's webhooks use the
// self-signed certificate, their hosts start on provisioned storage, and the Azurite one builds extent stores.
const sources = globSync(['{functions,shared,docgen,devhost,bench}/**/*.ts', 'test/support/{selfSignedCert,provision,azuriteExtents}.ts'], {
  cwd: root,
  ignore: ['**/*.test.ts', '**/*.d.ts', 'devhost/test/**'],
});
await build({ ...transpile, entryPoints: sources, outdir: join(root, 'dist'), outbase: root, format: 'cjs' });

const clientDist = join(root, 'clients', 'typescript', 'dist');
rmSync(clientDist, { recursive: true, force: true });
await build({
  ...transpile,
  entryPoints: globSync(['clients/typescript/src/**/*.ts'], { cwd: root, ignore: ['**/*.d.ts'] }),
  outdir: clientDist,
  outbase: join(root, 'clients', 'typescript', 'src'),
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
});

await buildDevhostCommands(root);
await buildApp(root);
await buildConsole(root);
console.log(`build: ${sources.length} files transpiled, the app bundled, in ${((performance.now() - started) / 1000).toFixed(1)} s`);
