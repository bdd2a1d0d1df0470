// The devhost's two commands, `node dist/devhost/cli.js` (every e2e host, the scale-out cluster, the
// benchmarks) and `node dist/devhost/start.js` (`npm start`), each bundled with its dependencies.
//
// Why: every devhost start resolved, read and compiled some 590 files (the devhost's own and its
// SDKs from node_modules) before the app's bundle, and `npm test` starts some 60 devhosts. The
// per-file output stays beside them (dist/devhost/**, which the benchmarks import).
//
//   dist/devhost/cli.js, start.js            entries: turn source maps on, then load their bundle, so
//                                            a devhost stack trace names its TypeScript sources
//   dist/devhost/bundle/{cli,start}.js(.map) the commands and their dependencies; the map covers the
//                                            repository's own sources
//
// Left out: `@azure/functions-core` (the devhost hands its own to the app's `require`) and Azurite,
// which runs as a process of its own from node_modules (devhost/azurite.ts resolves it there).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { build } from 'esbuild';

import { common, finishBundle } from './build-app.mjs';

const commands = ['cli', 'start'];

const entry = (command) => `'use strict';
// Written by scripts/build-devhost.mjs: Node reads a file's source map only if source maps are on
// when the file loads, so they are turned on before the bundle loads.
process.setSourceMapsEnabled(true);
require('./bundle/${command}.js');
`;

/** Builds dist/devhost/bundle/ and the two entries over the per-file build's cli.js and start.js. */
export async function buildDevhostCommands(root) {
  const outdir = join(root, 'dist', 'devhost', 'bundle');
  await build({
    ...common,
    absWorkingDir: root,
    entryPoints: Object.fromEntries(commands.map((c) => [c, `devhost/${c}.ts`])),
    outdir,
    external: ['@azure/functions-core', 'azurite', 'azurite/*'],
  });
  for (const command of commands) {
    finishBundle(join(outdir, `${command}.js`));
    writeFileSync(join(root, 'dist', 'devhost', `${command}.js`), entry(command));
  }
}
