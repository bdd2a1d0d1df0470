/**
 * Loads a v4 app the way the Node worker does: every file that `package.json` `main` names (a path
 * or a glob), in order, through Node's own module loader (not a test runner's), after the
 * `@azure/functions-core` hook is in place.
 *
 * Several hosts may run in one process (tests): before loading, modules of this app and the
 * Functions libraries are dropped from Node's cache so that each host gets a fresh
 * `@azure/functions` (which binds to the core API once, at first load) and its own registrations.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

import { globSync } from 'tinyglobby';

import { nativeModule } from '../core/nativeModule';
import { DevhostError } from '../errors';

interface PackageJson {
  readonly name?: string;
  readonly main?: string;
  readonly type?: string;
}

export function readPackageJson(appRoot: string): PackageJson {
  const file = join(appRoot, 'package.json');
  if (!existsSync(file))
    throw new DevhostError('AppLoadFailed', `No package.json in ${appRoot}: the devhost loads an app through its "main" entry`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
  } catch (err) {
    throw new DevhostError('AppLoadFailed', `${file} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The files `main` names, relative globs expanded and sorted (the worker loads them in order). */
export function entryFiles(appRoot: string, pkg: PackageJson): string[] {
  const main = pkg.main ?? 'index.js';
  const isGlob = /[*?[\]{}!]/.test(main);
  if (!isGlob) {
    const file = resolve(appRoot, main);
    const candidates = [file, `${file}.js`, `${file}.cjs`, `${file}.mjs`, join(file, 'index.js')];
    const found = candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
    if (found !== undefined) return [found];
    throw new DevhostError(
      'AppLoadFailed',
      `package.json "main" is ${JSON.stringify(main)}, but ${file} does not exist. Build the app first (npm run build).`,
    );
  }
  const files = globSync(main, { cwd: appRoot, absolute: true, onlyFiles: true, ignore: ['**/node_modules/**'] }).sort();
  if (files.length === 0) {
    throw new DevhostError(
      'AppLoadFailed',
      `package.json "main" is the glob ${JSON.stringify(main)}, which matches no file in ${appRoot}. Build the app first.`,
    );
  }
  return files;
}

const libraryPattern = /[\\/]node_modules[\\/](@azure[\\/]functions|durable-functions)[\\/]/;

function moduleCache(): Record<string, unknown> {
  return nativeModule()._cache;
}

function isInside(file: string, dir: string): boolean {
  const rel = relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/** Drops the Functions libraries and the app's own (non-node_modules) files from Node's module cache. */
export function forgetApp(appRoot: string): void {
  const cache = moduleCache();
  for (const file of Object.keys(cache)) {
    const ours = isInside(file, appRoot) && !file.includes(`${sep}node_modules${sep}`);
    if (ours || libraryPattern.test(file)) Reflect.deleteProperty(cache, file);
  }
}

/**
 * A `require` bound to Node's own loader, rooted at the app. (`createRequire` would do, except that a
 * test runner may replace it with its own module registry, where the core API hook is not seen.)
 */
function appModule(appRoot: string): InstanceType<ReturnType<typeof nativeModule>> {
  const Native = nativeModule();
  const parent = new Native(join(appRoot, 'package.json'));
  parent.filename = join(appRoot, 'package.json');
  parent.paths = Native._nodeModulePaths(appRoot);
  return parent;
}

function nativeRequire(appRoot: string): (id: string) => unknown {
  const parent = appModule(appRoot);
  return (id) => parent.require(id);
}

/**
 * The version of package `name` as the app would load it, or undefined when it cannot. Found from
 * the package's entry point upwards, so a package whose `exports` hide package.json is found too.
 */
export function installedVersion(appRoot: string, name: string): string | undefined {
  let dir: string;
  try {
    dir = dirname(nativeModule()._resolveFilename(name, appModule(appRoot)));
  } catch {
    return undefined;
  }
  for (; dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    try {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === name && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // Not a package.json we can read: keep looking upwards.
    }
  }
  return undefined;
}

/** Loads every entry file; ESM files (`.mjs` or `"type": "module"`) through `import()`. */
export async function loadEntries(appRoot: string, files: readonly string[], pkg: PackageJson): Promise<void> {
  const load = nativeRequire(appRoot);
  for (const file of files) {
    const esm = file.endsWith('.mjs') || (pkg.type === 'module' && !file.endsWith('.cjs'));
    try {
      if (esm) await import(pathToFileURL(file).href);
      else load(file);
    } catch (err) {
      const reason = err instanceof Error ? (err.stack ?? err.message) : String(err);
      throw new DevhostError('AppLoadFailed', `Worker was unable to load entry point "${relative(appRoot, file)}": ${reason}`);
    }
  }
}
