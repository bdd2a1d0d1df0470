// The app as every host loads it (package.json "main") and as the deployment package carries it:
// functions/index.ts and everything it imports bundled by esbuild into dist/app/, one file.
//
// Why a bundle: a host start (each Flex Consumption cold start, each devhost and real-host start)
// pays for every module the app loads: loading the per-file build meant resolving, reading and
// compiling some 1,500 files (1,200 of them from node_modules), at 0.69 s of CPU against 0.29 s for
// the bundle (`npm run bench -- coldstart`).
//
//   dist/app/index.js            the entry (scripts/app-entry.cjs): turns source maps on, then
//                                compiles the bundle with its code cache and runs it
//   dist/app/tallyho.js (+.map)  the app and its dependencies; the map covers the app's own sources
//   dist/app/tallyho.js.cache    V8's code cache of the bundle, made by loading it once here
//   dist/app/ondemand/*.js       SDKs only some deployments use (shared/onDemand.ts), each bundled
//                                on its own and loaded on first use, so a start never compiles them
//   dist/app/console-assets/, apidocs-assets/   the pages' files (scripts/build-console.mjs)
//
// Left out of the bundle: `@azure/functions-core`, which is no package but the worker's (and the
// devhost's) own API, handed to `require` by a hook. Nothing else needs node_modules at run time.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { decode, encode } from '@jridgewell/sourcemap-codec';
import { tokenizer, tokTypes } from 'acorn';
import { build } from 'esbuild';

/** What shared/onDemand.ts `require`s on first use, and the file each is bundled into. */
const onDemand = {
  '@azure/identity': 'identity',
  '@azure/monitor-opentelemetry-exporter': 'azure-monitor',
  '@azure/service-bus': 'service-bus',
  '@opentelemetry/exporter-metrics-otlp-http': 'otlp-metrics',
  '@opentelemetry/exporter-trace-otlp-http': 'otlp-traces',
};

/** Options the builds share: Node 20 CommonJS; source maps without the sources' text (stack traces need only the positions). */
export const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'linked',
  sourcesContent: false,
  // Whitespace and syntax only (a quarter fewer bytes to read and compile at each start): identifiers
  // keep their names, so a frame in a dependency, which the map leaves out, still names its function.
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

/**
 * Modules a dependency requires at the top of its files but calls only later: durable-functions'
 * client makes its HTTP calls with axios (whose fetch probe, run as it loads, loads Node's undici: a
 * tenth of the app's load CPU), checks URLs with one validator function, and times long timers with
 * moment. In the bundle each such `require` returns a stand-in that requires the real module the
 * first time it is called or read, so a start that never builds a durable client never loads them.
 * Same code, loaded on first use (test/integration/appBundle.test.ts checks that a start leaves them).
 */
const deferredModules = { 'durable-functions': ['axios', 'moment', 'validator'] };

/**
 * The stand-in for `specifier`: requires it the first time it is called, constructed or read. A
 * function target, so that it can also be called (moment is).
 */
export function deferredStandIn(specifier) {
  return `let real;
const load = () => (real ??= require(${JSON.stringify(specifier)}));
module.exports = new Proxy(function deferred() {}, {
  apply: (_, self, args) => Reflect.apply(load(), self, args),
  construct: (_, args) => Reflect.construct(load(), args),
  get: (_, key) => Reflect.get(load(), key),
  set: (_, key, value) => Reflect.set(load(), key, value),
  has: (_, key) => Reflect.has(load(), key),
});
`;
}

const deferred = {
  name: 'deferred-modules',
  setup(b) {
    const importers = Object.keys(deferredModules).map((pkg) => `/node_modules/${pkg}/`);
    const names = new Set(Object.values(deferredModules).flat());
    b.onResolve({ filter: /^[a-z]/ }, (args) => {
      // The stand-in's own require (namespace 'deferred') resolves as usual. Only a CommonJS
      // `require` gets one: an ES import copies the module's own keys at once, which a stand-in has not.
      const deferrable = args.namespace === 'file' && args.kind === 'require-call' && names.has(args.path);
      if (!deferrable || !importers.some((dir) => args.importer.replaceAll('\\', '/').includes(dir))) return undefined;
      return { path: args.path, namespace: 'deferred', pluginData: { resolveDir: args.resolveDir } };
    });
    b.onLoad({ filter: /.*/, namespace: 'deferred' }, (args) => ({
      contents: deferredStandIn(args.path),
      resolveDir: args.pluginData.resolveDir,
      loader: 'js',
    }));
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

/**
 * Loads the built app once, in a fresh Node process, as a host does (the devhost's
 * `@azure/functions-core` installed first, as the worker installs its own), and writes V8's code
 * cache of the bundle after the load: the bytecode of every function the load ran, behind the
 * SHA-256 of the source and the path it is for (scripts/app-entry.cjs reads it): `runsAt`, the
 * folder the bundle will be loaded from, dist/app itself unless a package is made for another place
 * (scripts/deploy.sh). The environment is Node's bare one (no NODE_OPTIONS: V8 refuses a cache made
 * under other flags) and a storage setting, so the app loads as it does in a host, and no setting of
 * the build machine decides what the cache holds.
 */
export function makeCodeCache(root, outdir, runsAt = outdir) {
  const coreApi = join(root, 'dist', 'devhost', 'core', 'coreApi.js');
  // The entry compiles the bundle under this name (scripts/app-entry.cjs): the path it will run at.
  const script = `
    globalThis[Symbol.for('tallyho.codeCacheFor')] = ${JSON.stringify(join(runsAt, 'tallyho.js'))};
    const { Registry, installCoreApi } = require(${JSON.stringify(coreApi)});
    installCoreApi(new Registry());
    const entry = require(${JSON.stringify(join(outdir, 'index.js'))});
    require('node:fs').writeFileSync(${JSON.stringify(join(outdir, 'tallyho.js.cache'))}, entry.makeCache());
    process.exit(0);`;
  const env = { PATH: process.env.PATH ?? '', AzureWebJobsStorage: 'UseDevelopmentStorage=true' };
  const run = spawnSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8', env });
  if (run.status !== 0) throw new Error(`Making the bundle's code cache failed (${run.status}):\n${run.stderr}`);
}

/**
 * Builds dist/app/ under `root` (emptied first; the devhost, which the code cache is made with, must
 * be built). The cold-start benchmark also builds its baselines with it: into `outdir`, without
 * `deferModules`, `ascii` (finishBundle) or `codeCache`, with `plugins` of its own before these.
 */
export async function buildApp(
  root,
  { outdir = join(root, 'dist', 'app'), deferModules = true, ascii = true, codeCache = true, plugins = [] } = {},
) {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const app = await build({
    ...common,
    absWorkingDir: root,
    entryPoints: { tallyho: 'functions/index.ts' },
    outdir,
    external: ['@azure/functions-core'],
    plugins: [...plugins, onDemandFiles, ...(deferModules ? [deferred] : [])],
    metafile: true,
  });
  // The SDKs' own code only: no map (nothing of the app's sources is in them) and not minified, so
  // a stack trace through them reads as a line under a comment naming the package's file.
  const chunks = await build({
    ...common,
    sourcemap: false,
    minifyWhitespace: false,
    absWorkingDir: root,
    entryPoints: Object.fromEntries(Object.entries(onDemand).map(([pkg, file]) => [`ondemand/${file}`, `ondemand:${pkg}`])),
    outdir,
    plugins: [onDemandEntries(root)],
    metafile: true,
  });
  finishBundle(join(outdir, 'tallyho.js'), { ascii });
  copyFileSync(join(root, 'scripts', 'app-entry.cjs'), join(outdir, 'index.js'));
  if (codeCache) makeCodeCache(root, outdir);
  // What esbuild left to `require` at run time, beside dist/app rather than in it (not deployed):
  // test/integration/appBundle.test.ts checks it is Node's and the worker's alone.
  const externals = [app.metafile, chunks.metafile].flatMap((meta) =>
    Object.values(meta.outputs).flatMap((output) => output.imports.filter((i) => i.external).map((i) => i.path)),
  );
  writeFileSync(join(outdir, '..', 'app-externals.json'), `${JSON.stringify([...new Set(externals)].sort(), null, 2)}\n`);
}

/**
 * What every bundle of this repository gets after esbuild, its map read and written once: with
 * `ascii`, its characters outside ASCII escaped (`escapeNonAscii`), and its map kept to the
 * repository's own sources (`ownCodeOnly`). The app's build and the devhost's (build-devhost.mjs).
 */
export function finishBundle(jsFile, { ascii = true } = {}) {
  const mapFile = `${jsFile}.map`;
  const escapes = ascii ? escapeNonAscii(jsFile) : [];
  const map = JSON.parse(readFileSync(mapFile, 'utf8'));
  writeFileSync(mapFile, JSON.stringify(ownCodeOnly({ ...map, mappings: moved(decode(map.mappings), escapes) })));
}

/**
 * Writes every character outside ASCII in a bundle as a `\u` escape of its UTF-16 code unit; returns
 * the escapes' columns, row by row (a map's columns count UTF-16 code units from the line's start).
 * esbuild escapes them in strings but leaves regular expression literals as written (validator's
 * locale patterns, the word counter's letters), and a single one made Node decode the whole 3.6 MB
 * file into a two-byte string: a tenth of a start's CPU once the code cache took the compiling away.
 * An escape means the same code unit in a string, a regular expression (with the u flag a pair of
 * them is the one code point) and a name, so only those tokens are escaped (acorn reads them); in a
 * template (a tagged one's raw text would change) the build stops and says where.
 */
function escapeNonAscii(jsFile) {
  const text = readFileSync(jsFile, 'utf8');
  if (!/[\u0080-\uffff]/.test(text)) return [];
  const escapable = new Set([tokTypes.regexp, tokTypes.string, tokTypes.name]);
  /** Offsets in `text` of the code units escaped, in order. */
  const offsets = [];
  for (const token of tokenizer(text, { ecmaVersion: 'latest', sourceType: 'script', allowHashBang: true })) {
    for (let at = token.start; at < token.end; at++) {
      if (text.charCodeAt(at) < 0x80) continue;
      if (!escapable.has(token.type)) throw new Error(`${jsFile}: a character outside ASCII in a ${token.type.label} at offset ${at}`);
      offsets.push(at);
    }
  }
  let out = '';
  let from = 0;
  for (const at of offsets) {
    out += `${text.slice(from, at)}\\u${text.charCodeAt(at).toString(16).padStart(4, '0')}`;
    from = at + 1;
  }
  writeFileSync(jsFile, out + text.slice(from));
  const escapes = [];
  let row = 0;
  let rowStart = 0;
  let next = text.indexOf('\n');
  for (const at of offsets) {
    while (next !== -1 && next < at) {
      row++;
      rowStart = next + 1;
      next = text.indexOf('\n', rowStart);
    }
    (escapes[row] ??= []).push(at - rowStart);
  }
  return escapes;
}

/** Decoded mappings with each segment moved past the escapes before it on its row. */
function moved(lines, escapes) {
  return lines.map((segments, row) => {
    const columns = escapes[row];
    if (columns === undefined) return segments;
    // Each escape is six characters where there was one: a segment moves five for each before it.
    let before = 0;
    return segments.map(([column, ...rest]) => {
      while (before < columns.length && columns[before] < column) before++;
      return [column + 5 * before, ...rest];
    });
  });
}

/**
 * Keeps only the mappings into the app's own sources (functions/, shared/). Node decodes a file's
 * whole map the first time a stack trace passes through the file, and the dependencies' mappings
 * were five sixths of it: the first error of a process cost some 200 ms of CPU (the first request,
 * on the devhost), against some 50 ms now. A frame in a dependency keeps its function's name and the
 * bundle's position. `map.mappings` comes decoded; the map returned is encoded.
 */
function ownCodeOnly(map) {
  const own = map.sources.map((source) => !/(^|\/)node_modules\/|^[a-z]+:\/\//.test(source));
  const sources = [];
  const renumbered = map.sources.map((source, i) => (own[i] ? sources.push(source) - 1 : -1));
  const names = [];
  const nameIndex = new Map();
  const keepName = (i) => {
    if (!nameIndex.has(i)) nameIndex.set(i, names.push(map.names[i]) - 1);
    return nameIndex.get(i);
  };
  const lines = map.mappings.map((segments) => {
    const kept = [];
    for (const segment of segments) {
      const source = segment.length === 1 ? -1 : renumbered[segment[1]];
      // A segment of the generated column alone ends the mapping before it; one is enough in a row.
      if (source === -1) {
        if (kept.length > 0 && kept.at(-1).length > 1) kept.push([segment[0]]);
        continue;
      }
      kept.push(
        segment.length === 5
          ? [segment[0], source, segment[2], segment[3], keepName(segment[4])]
          : [segment[0], source, segment[2], segment[3]],
      );
    }
    return kept;
  });
  return { ...map, sources, names, mappings: encode(lines) };
}

// `node scripts/build-app.mjs code-cache <built app folder> <folder it will run at>`: the code cache
// of a deployment package (scripts/deploy.sh), for the path Azure runs it at.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv[2] === 'code-cache') {
  const [outdir, runsAt] = process.argv.slice(3);
  if (outdir === undefined || runsAt === undefined) throw new Error('usage: build-app.mjs code-cache <app folder> <folder it will run at>');
  makeCodeCache(join(dirname(fileURLToPath(import.meta.url)), '..'), resolve(outdir), runsAt);
}
