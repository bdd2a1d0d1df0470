/**
 * The bundled app (dist/app, package.json `main`; scripts/build-app.mjs) is the same app as the
 * per-file build, needs nothing from node_modules, leaves the on-demand SDKs to first use, and its
 * stack traces name the TypeScript sources. Each load runs in a fresh Node process with the
 * devhost's `@azure/functions-core` installed first, as the worker installs its own.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const app = join(root, 'dist', 'app');
const main = join(root, (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { main: string }).main);

interface Loaded {
  readonly functions: string[];
  readonly modules: string[];
  /** Whether Node's fetch (undici) was loaded: axios's fetch probe loads it as axios loads. */
  readonly fetchLoaded: boolean;
  readonly stack?: string;
}

/** Loads `entry` in a fresh process; with `fail`, then calls the health function's handler with no request. */
function load(entry: string, fail = false): Loaded {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` before this test (npm test does)`);
  const script = `
    const { Registry, installCoreApi } = require(${JSON.stringify(join(root, 'dist', 'devhost', 'core', 'coreApi.js'))});
    const registry = new Registry();
    installCoreApi(registry);
    const before = new Set(Object.keys(require.cache));
    require(${JSON.stringify(entry)});
    const out = {
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
  const run = spawnSync(process.execPath, ['-e', script], {
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

  test("leaves durable-functions' axios, moment and validator to first use (scripts/build-app.mjs deferredModules)", () => {
    // The per-file build loads axios with durable-functions, and axios's fetch probe loads undici.
    expect(started(perFile).fetchLoaded).toBe(true);
    expect(started(main).fetchLoaded).toBe(false);
  }, 120_000);

  test("names the TypeScript source in a stack trace through the app's code", () => {
    const { stack } = load(main, true);
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
