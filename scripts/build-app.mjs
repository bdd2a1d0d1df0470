// The app as every host loads it (package.json "main") and as the deployment package carries it:
// functions/index.ts and everything it imports bundled by esbuild into dist/app/, one file.
//
// Why a bundle: a host start (each Flex Consumption cold start, each devhost and real-host start)
// pays for every module the app loads. Node's loader resolving, reading and compiling some 1,800
// files from node_modules cost more CPU than the code they hold (`npm run bench -- coldstart`).
//
//   dist/app/index.js            the entry: turns source maps on, then loads the bundle
//   dist/app/tallyho.js (+.map)  the app and its dependencies
//   dist/app/ondemand/*.js       SDKs only some deployments use (shared/onDemand.ts), each bundled
//                                on its own and loaded on first use, so a start never compiles them
//   dist/app/console-assets/, apidocs-assets/   the pages' files (scripts/build-console.mjs)
//
// Left out of the bundle: `@azure/functions-core`, which is no package but the worker's (and the
// devhost's) own API, handed to `require` by a hook. Nothing else needs node_modules at run time.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { build } from 'esbuild';

/** What shared/onDemand.ts `require`s on first use, and the file each is bundled into. */
export const onDemand = {
  '@azure/identity': 'identity',
  '@azure/monitor-opentelemetry-exporter': 'azure-monitor',
  '@azure/service-bus': 'service-bus',
  '@opentelemetry/exporter-metrics-otlp-http': 'otlp-metrics',
  '@opentelemetry/exporter-trace-otlp-http': 'otlp-traces',
};

/** Options both builds share: Node 20 CommonJS, source maps without the sources' text (stack traces need only the positions). */
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'linked',
  sourcesContent: false,
  // Whitespace and syntax only: identifiers keep their names, so a stack trace read without the map still names functions.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
  // The ES module builds of the Azure SDKs (chosen for `import`, and tree-shaken) make their `require`
  // and `__dirname` from import.meta.url, which a CommonJS bundle lacks: it becomes the bundle file's URL.
  define: { 'import.meta.url': '__bundleFileUrl' },
  banner: { js: 'var __bundleFileUrl = require("node:url").pathToFileURL(__filename).href;' },
};

/** In the app bundle, each on-demand SDK becomes a `require` of its own bundle, made when shared/onDemand.ts first asks. */
const onDemandFiles = {
  name: 'on-demand-files',
  setup(b) {
    const filter = new RegExp(
      `^(${Object.keys(onDemand)
        .map((n) => n.replace(/[/.-]/g, '\\$&'))
        .join('|')})$`,
    );
    b.onResolve({ filter }, (args) => ({ path: `./ondemand/${onDemand[args.path]}.js`, external: true }));
  },
};

/** Entry modules that only re-export an SDK: `ondemand:<package>`. */
const onDemandEntries = (root) => ({
  name: 'on-demand-entries',
  setup(b) {
    b.onResolve({ filter: /^ondemand:/ }, (args) => ({ path: args.path.slice('ondemand:'.length), namespace: 'ondemand' }));
    b.onLoad({ filter: /.*/, namespace: 'ondemand' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      resolveDir: root,
      loader: 'js',
    }));
  },
});

const entry = `'use strict';
// The app's entry point (package.json "main"), written by scripts/build-app.mjs. Node reads a file's
// source map only if source maps are on when it loads the file, so they are turned on here, before
// the bundle loads: stack traces then name the TypeScript sources and lines.
const { setSourceMapsSupport } = require('node:module');
if (typeof setSourceMapsSupport === 'function') setSourceMapsSupport(true);
else process.setSourceMapsEnabled(true);
require('./tallyho.js');
`;

/** Builds dist/app/ under `root` (emptied first); resolves with esbuild's metafile of the app bundle. */
export async function buildApp(root) {
  const outdir = join(root, 'dist', 'app');
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const app = await build({
    ...common,
    absWorkingDir: root,
    entryPoints: { tallyho: 'functions/index.ts' },
    outdir,
    external: ['@azure/functions-core'],
    plugins: [onDemandFiles],
    metafile: true,
  });
  await build({
    ...common,
    absWorkingDir: root,
    entryPoints: Object.fromEntries(Object.entries(onDemand).map(([pkg, file]) => [`ondemand/${file}`, `ondemand:${pkg}`])),
    outdir,
    plugins: [onDemandEntries(root)],
  });
  writeFileSync(join(outdir, 'index.js'), entry);
  return app.metafile;
}
