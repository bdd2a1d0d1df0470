/**
 * The bundled app (dist/app, package.json `main`; scripts/build-app.mjs) is the same app as the
 * per-file build, needs nothing from node_modules, leaves the on-demand SDKs to first use, compiles
 * from the code cache the build made (and from the source when that cache is not for it), and its
 * stack traces name the TypeScript sources. Each load runs in a fresh Node process with the
 * devhost's `@azure/functions-core` installed first, as the worker installs its own.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules, SourceMap, type SourceMapPayload } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const root = join(__dirname, '..', '..');
const app = join(root, 'dist', 'app');
const main = join(root, (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { main: string }).main);

interface Loaded {
  readonly functions: string[];
  readonly modules: string[];
  /** Whether Node's fetch (undici) was loaded: axios's fetch probe loads it as axios loads. */
  readonly fetchLoaded: boolean;
  /** How the entry compiled the bundle (scripts/app-entry.cjs); undefined for the per-file build. */
  readonly codeCache?: string;
  readonly stack?: string;
}

/**
 * Loads `entry` in a fresh process (started with `nodeFlags`); with `fail`, then calls the health
 * function's handler with no request.
 */
function load(entry: string, fail = false, nodeFlags: readonly string[] = []): Loaded {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` before this test (npm test does)`);
  const script = `
    const { Registry, installCoreApi } = require(${JSON.stringify(join(root, 'dist', 'devhost', 'core', 'coreApi.js'))});
    const registry = new Registry();
    installCoreApi(registry);
    const before = new Set(Object.keys(require.cache));
    const { codeCache } = require(${JSON.stringify(entry)});
    const out = {
      codeCache,
      functions: [...registry.functions.keys()].sort(),
      modules: Object.keys(require.cache).filter((m) => !before.has(m)),
      fetchLoaded: process.moduleLoadList.some((m) => m.includes('undici')),
    };
    const done = () => process.stdout.write(JSON.stringify(out), () => process.exit(0));
    if (!${String(fail)}) done();
    else Promise.resolve()
      .then(() => registry.functions.get('health').callback(undefined))
      .catch((err) => { out.stack = err.stack; })
      .finally(done);`;
  const run = spawnSync(process.execPath, [...nodeFlags, '-e', script], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, AzureWebJobsStorage: 'UseDevelopmentStorage=true' },
  });
  if (run.status !== 0) throw new Error(`loading ${entry} failed (${run.status}):\n${run.stderr}`);
  return JSON.parse(run.stdout) as Loaded;
}

/** Each entry loaded once, in its own process, for every test that reads what its start did. */
const loaded = new Map<string, Loaded>();
function started(entry: string): Loaded {
  let found = loaded.get(entry);
  if (found === undefined) loaded.set(entry, (found = load(entry)));
  return found;
}
const perFile = join(root, 'dist', 'functions', 'index.js');

describe('the bundled app', () => {
  test('is what package.json main loads, and registers the same functions as the per-file build', () => {
    expect(main).toBe(join(app, 'index.js'));
    const bundled = started(main);
    expect(bundled.functions.length).toBeGreaterThan(20);
    expect(bundled.functions).toEqual(started(perFile).functions);
  }, 120_000);

  test('loads nothing from node_modules, and none of the on-demand SDKs, at start', () => {
    const { modules } = started(main);
    expect(modules.filter((m) => m.includes('node_modules'))).toEqual([]);
    expect(modules.map((m) => m.slice(app.length + 1)).sort()).toEqual(['index.js', 'tallyho.js']);
  }, 60_000);

  test('is ASCII only, and its map still points past an escaped character (scripts/build-app.mjs finishBundle)', () => {
    const bundle = readFileSync(join(app, 'tallyho.js'), 'utf8');
    expect(bundle.match(/[\u0080-\uffff]/g) ?? []).toEqual([]);
    // The word counter's letters: a regular expression with '’' in it, which esbuild leaves as written.
    const source = readFileSync(join(root, 'shared', 'wordcount', 'processor.ts'), 'utf8').split('\n');
    const sourceRow = source.findIndex((line) => line.includes("'’-]+/gu)?.length"));
    expect(sourceRow).toBeGreaterThanOrEqual(0);
    const rows = bundle.split('\n');
    const row = rows.findIndex((line) => line.includes("'\\u2019-]+/gu)?.length"));
    // `length`, the first name after the escape that has a mapping of its own.
    const column = (rows[row] ?? '').indexOf('length', (rows[row] ?? '').indexOf('\\u2019'));
    const map = new SourceMap(JSON.parse(readFileSync(join(app, 'tallyho.js.map'), 'utf8')) as SourceMapPayload);
    expect(map.findEntry(row, column)).toMatchObject({
      originalSource: expect.stringMatching(/shared\/wordcount\/processor\.ts$/) as unknown,
      originalLine: sourceRow,
      originalColumn: (source[sourceRow] ?? '').indexOf('length'),
    });
  });

  describe("compiles from the build's code cache only when it was made for this source and this Node", () => {
    let copy: string;
    beforeAll(() => {
      copy = mkdtempSync(join(tmpdir(), 'tallyho-bundle-'));
    });
    afterAll(() => {
      rmSync(copy, { recursive: true, force: true });
    });
    /** dist/app copied, then changed by `change`; the copy's entry. */
    const changedCopy = (name: string, change: (dir: string) => void): string => {
      const dir = join(copy, name);
      cpSync(app, dir, { recursive: true });
      change(dir);
      return join(dir, 'index.js');
    };

    test('the build made one, and a start takes it', () => {
      expect(existsSync(join(app, 'tallyho.js.cache'))).toBe(true);
      expect(started(main).codeCache).toBe('accepted');
    });

    test('a cache of another source is ignored, even one V8 would take (same length), and the app loads the same', () => {
      const entry = changedCopy('stale', (dir) => {
        const file = join(dir, 'tallyho.js');
        const text = readFileSync(file, 'utf8');
        // The banner's `var` as `let`: the same length, so V8's own check (the length) would pass.
        expect(text.startsWith('var __bundleFileUrl')).toBe(true);
        writeFileSync(file, `let${text.slice(3)}`);
      });
      const loaded = load(entry);
      expect(loaded.codeCache).toBe('stale');
      expect(loaded.functions).toEqual(started(main).functions);
    }, 60_000);

    test('a cache serves the path it was made for: a moved bundle compiles its source, one made for its new path is taken, and traces name the sources', () => {
      // On Node 20 a script compiled from a cache keeps the path the cache was made at: taken at
      // another path, its traces named the build's bundle, for which Node had no map (real host 4.1037).
      const entry = changedCopy('moved', () => undefined);
      const tsFrame = /\n\s+at .*[/\\]functions[/\\]_http\.ts:\d+:\d+\)?\n/;
      const moved = load(entry, true);
      expect(moved.codeCache).toBe('moved');
      expect(moved.stack).toMatch(tsFrame);
      expect(moved.stack).not.toContain(app);
      const dir = dirname(entry);
      // What scripts/deploy.sh runs for a package, here for the copy's own folder.
      const made = spawnSync(process.execPath, [join(root, 'scripts', 'build-app.mjs'), 'code-cache', dir, dir], {
        cwd: root,
        encoding: 'utf8',
      });
      expect(made.stderr).toBe('');
      expect(made.status).toBe(0);
      const remade = load(entry, true);
      expect(remade.codeCache).toBe('accepted');
      expect(remade.stack).toMatch(tsFrame);
      expect(remade.stack).not.toContain(app);
      expect(remade.stack).not.toMatch(/tallyho\.js:\d+:\d+/);
    }, 120_000);

    test("without a cache, or in a Node whose V8 flags differ from the build's (a heap limit), the source is compiled", () => {
      const entry = changedCopy('absent', (dir) => rmSync(join(dir, 'tallyho.js.cache')));
      const absent = load(entry);
      expect(absent.codeCache).toBe('absent');
      expect(absent.functions).toEqual(started(main).functions);
      const otherFlags = load(main, false, ['--max-old-space-size=3000']);
      expect(otherFlags.codeCache).toBe('rejected');
      expect(otherFlags.functions).toEqual(started(main).functions);
    }, 60_000);
  });

  test("leaves durable-functions' axios, moment and validator to first use (scripts/build-app.mjs deferredModules)", () => {
    // The per-file build loads axios with durable-functions, and axios's fetch probe loads undici.
    expect(started(perFile).fetchLoaded).toBe(true);
    expect(started(main).fetchLoaded).toBe(false);
  }, 120_000);

  test("names the TypeScript source in a stack trace through the app's code", () => {
    const { stack, codeCache } = load(main, true);
    // Compiled from the cache, where Node never read the bundle's source map itself.
    expect(codeCache).toBe('accepted');
    expect(stack).toMatch(/\n\s+at .*[/\\]functions[/\\]_http\.ts:\d+:\d+\)?\n/);
    expect(stack).not.toMatch(/tallyho\.js:\d+:\d+\)?\n\s+at .*_http/);
  }, 60_000);

  test('requires only Node built-ins, the worker API and its own on-demand files, each of which loads its SDK', () => {
    // What esbuild left to require at run time, as scripts/build-app.mjs recorded it.
    const externals = JSON.parse(readFileSync(join(root, 'dist', 'app-externals.json'), 'utf8')) as string[];
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    expect(externals.filter((r) => !builtins.has(r) && r !== '@azure/functions-core' && !r.startsWith('./ondemand/'))).toEqual([]);
    const exports: Record<string, string> = {
      identity: 'DefaultAzureCredential',
      'azure-monitor': 'AzureMonitorMetricExporter',
      'service-bus': 'ServiceBusClient',
      'otlp-metrics': 'OTLPMetricExporter',
      'otlp-traces': 'OTLPTraceExporter',
    };
    expect(externals.filter((r) => r.startsWith('./ondemand/'))).toEqual(
      Object.keys(exports)
        .sort()
        .map((f) => `./ondemand/${f}.js`),
    );
    expect(readdirSync(join(app, 'ondemand')).sort()).toEqual(
      Object.keys(exports)
        .sort()
        .map((f) => `${f}.js`),
    );
    for (const [file, name] of Object.entries(exports)) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the built file itself is what is checked
      const sdk = require(join(app, 'ondemand', `${file}.js`)) as Record<string, unknown>;
      expect(typeof sdk[name]).toBe('function');
    }
  }, 60_000);
});
