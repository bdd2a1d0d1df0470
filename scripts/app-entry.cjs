'use strict';
// The app's entry point (package.json "main"): scripts/build-app.mjs copies this file to
// dist/app/index.js, beside the bundle (tallyho.js) and its code cache (tallyho.js.cache).
//
// Why not `require('./tallyho.js')`: Node 20's loader compiles a file from its source at every start,
// and compiling the bundle, with the functions its load runs, was about a third of a start's CPU.
// The build loads the bundle once and keeps V8's code cache of it (bytecode of every function the
// load ran); a start hands that cache to V8 with the source (`vm.Script` `cachedData`). V8 takes it
// only when its own version and flags are those of the build's Node, and otherwise compiles as
// usual: the same code runs either way. V8 checks only the source's length, so the cache also
// carries the SHA-256 of the source it was made from, and a cache of any other source is ignored.
//
// A cache is made for one path: on Node 20 a script compiled from a cache keeps the file name it was
// compiled under when the cache was made, so its stack traces would name that path (the build
// machine's) and Node would find no source map for it. The cache therefore names the path it was
// made for, and a bundle at any other path compiles its source. scripts/deploy.sh makes the
// package's cache for the path the app runs at in Azure (/home/site/wwwroot).
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const Module = require('node:module');
const { join } = require('node:path');
const { constants: vmConstants, Script } = require('node:vm');

// Node reads a file's source map only if source maps are on when the file loads, so they are
// turned on first: stack traces then name the TypeScript sources and lines.
if (typeof Module.setSourceMapsSupport === 'function') Module.setSourceMapsSupport(true);
else process.setSourceMapsEnabled(true);

const file = join(__dirname, 'tallyho.js');
const cacheFile = `${file}.cache`;
// The build makes a cache for another path (the one the app will run at) by naming it here first.
const scriptName = globalThis[Symbol.for('tallyho.codeCacheFor')] ?? file;
const digestBytes = 32;

const source = readFileSync(file);
const digestOf = (bytes) => createHash('sha256').update(bytes).digest();

/**
 * A cache file: the source's digest, the length of the path it was made for (4 bytes), that path,
 * then V8's data.
 */
function cacheOf(data) {
  const nameEnd = digestBytes + 4 + data.readUInt32BE(digestBytes);
  return { digest: data.subarray(0, digestBytes), name: data.toString('utf8', digestBytes + 4, nameEnd), v8: data.subarray(nameEnd) };
}

/** The cache made from this very source for this path, or why there is none: `absent`, `stale` or `moved`. */
function cachedData() {
  let data;
  try {
    data = readFileSync(cacheFile);
  } catch {
    return 'absent';
  }
  if (data.length < digestBytes + 4) return 'stale';
  const found = cacheOf(data);
  if (!found.digest.equals(digestOf(source))) return 'stale';
  return found.name === scriptName ? found.v8 : 'moved';
}

const cache = cachedData();
const text = source.toString('utf8');
// Module.wrap adds text to the first line only; the bundle's first line is a banner that never
// throws, so every position a stack trace names is the bundle's own. A dynamic import() in the
// bundle resolves as in any module of the app (Node 20.12 and later).
const script = new Script(Module.wrap(text), {
  filename: scriptName,
  ...(vmConstants?.USE_MAIN_CONTEXT_DEFAULT_LOADER === undefined
    ? {}
    : { importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER }),
  ...(typeof cache === 'string' ? {} : { cachedData: cache }),
});

// Node keeps a source map per module it compiled, and finds it by the file's name when it formats a
// stack trace. The bundle is compiled here, so its map is handed to Node through a module of the
// same name that holds only the map's comment (a test checks that traces still name the sources).
const bundle = new Module(file, module);
bundle.filename = file;
const mapComment = text.lastIndexOf('\n//# sourceMappingURL=');
if (mapComment >= 0) bundle._compile(text.slice(mapComment), file);
require.cache[file] = bundle;

script.runInThisContext()(bundle.exports, Module.createRequire(file), bundle, file, __dirname);
bundle.loaded = true;

/**
 * How this start compiled the bundle: `accepted` (from the cache), `rejected` (V8 refused it: another
 * Node or other V8 flags), `stale` (a cache of another source), `moved` (a cache made for another
 * path) or `absent`. `makeCache` is the build's: the cache of what this load compiled, for this path.
 */
module.exports = {
  codeCache: typeof cache === 'string' ? cache : script.cachedDataRejected === true ? 'rejected' : 'accepted',
  makeCache: () => {
    const name = Buffer.from(scriptName, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(name.length);
    return Buffer.concat([digestOf(source), length, name, script.createCachedData()]);
  },
};
