/**
 * One measured load of the app, in a fresh process (bench/coldstart.ts runs it):
 * `node dist/bench/support/loadApp.js <entry file>`. It installs the devhost's `@azure/functions-core`
 * first, as the Node worker installs its own, so the app registers its functions as in a host; then
 * it loads the entry and prints one JSON line (`LoadFigures`).
 */
import { installCoreApi, Registry } from '../../devhost/core/coreApi';

export interface LoadFigures {
  /** CPU (user + system) the entry's load took: what every host start pays for the app. */
  readonly loadCpuMs: number;
  /** The process's CPU by the end of the load, Node's own start-up included. */
  readonly processCpuMs: number;
  readonly functions: number;
  /** How the bundle's entry compiled it (scripts/app-entry.cjs `codeCache`); none for the per-file builds. */
  readonly codeCache?: string;
}

const entry = process.argv[2];
if (entry === undefined) throw new Error('usage: node loadApp.js <entry file>');
const registry = new Registry();
installCoreApi(registry);
const before = process.cpuUsage();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loading the entry as the worker does is what is measured
const loaded = require(entry) as { codeCache?: unknown };
const load = process.cpuUsage(before);
const total = process.cpuUsage();
const figures: LoadFigures = {
  loadCpuMs: (load.user + load.system) / 1000,
  processCpuMs: (total.user + total.system) / 1000,
  functions: registry.functions.size,
  ...(typeof loaded.codeCache === 'string' ? { codeCache: loaded.codeCache } : {}),
};
console.log(JSON.stringify(figures));
