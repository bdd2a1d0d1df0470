/**
 * Cold start: what a host start pays for loading the app. The bundle (dist/app, package.json `main`,
 * what the deployment package carries) against the per-file build as `tsc` made it before the bundle
 * (compiled here, `bench/support/appVariants.ts`), in the same run:
 *   load       — a fresh Node process installs the devhost's `@azure/functions-core` (as the worker
 *                installs its own) and loads the entry: the CPU of that load (user + system), and the
 *                process's CPU by then. Also npm run build's own per-file output (esbuild), to show
 *                that the bundle, not the transpiler, makes the difference, and the bundle as it was
 *                on 11-28 (all of zod, durable-functions' dependencies at start), built here from
 *                today's sources, for the effect of the bundle's second pass, and the bundle without
 *                its code cache (as a Node other than the build's loads it). Rounds of one run each,
 *                their order rotated; medians, and the bundle's ratio paired by round;
 *   devhost    — `node dist/devhost/cli.js` spawned on the per-file build and the bundle with and
 *                without its code cache → the first 200 of GET
 *                /api/health: wall time, and the process's CPU by then;
 *   real host  — (with FUNCTIONS_HOST_BUILD and dotnet) the real Functions host on a copy of each
 *                folder: the Node worker's start (its /proc start time) → the first 200 of GET
 *                /api/health, and the worker's CPU by then.
 * Target (issue #39): the bundle's load CPU ≤ 0.3 s, from 0.83 s for the per-file build on the
 * reporter's quiet machine: about a third.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { freePort, startAzurite } from '../devhost/azurite';
import { buildExtensions } from '../devhost/realHost/extensions';
import { copyApp } from '../devhost/realHost/appCopy';
import { configuredHostBuild, copyHostBuild, type HostBuild } from '../devhost/realHost/hostBuild';
import { startRealHost } from '../devhost/realHost/process';
import {
  type AppVariant,
  bundleBeforeVariant,
  bundleVariant,
  bundleWithoutCacheVariant,
  cacheForCopy,
  esbuildPerFileVariant,
  tscVariant,
} from './support/appVariants';
import { startDevhostChild } from './support/devhostChild';
import type { LoadFigures } from './support/loadApp';
import { findProcess, processCpuMs, processStartSeconds, uptimeSeconds } from './support/proc';
import { fmt, header, median, pairedRatio, type Row, table } from './support/report';
import { sampleSettings } from './support/settings';

const repoRoot = resolve(__dirname, '..', '..');
const loadRounds = Number(process.env.BENCH_COLDSTART_ROUNDS ?? '10');
const hostRounds = Number(process.env.BENCH_COLDSTART_HOST_ROUNDS ?? '4');

/** The variants in a different order each round, so a drift in the machine's load falls on all of them. */
function rotated<T>(items: readonly T[], round: number): T[] {
  return items.map((_, i) => items[(i + round) % items.length] as T);
}

function quartiles(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
  return `${fmt(at(0.25), 0)}–${fmt(at(0.75), 0)}`;
}

function loadOnce(variant: AppVariant, env: NodeJS.ProcessEnv): LoadFigures {
  const run = spawnSync(process.execPath, [join(__dirname, 'support', 'loadApp.js'), variant.entry], { encoding: 'utf8', env });
  const line = run.stdout.trim().split('\n').at(-1) ?? '';
  if (run.status !== 0 || !line.startsWith('{')) throw new Error(`loading ${variant.entry} failed (${run.status}):\n${run.stderr}`);
  return JSON.parse(line) as LoadFigures;
}

/** Polls `url` every 20 ms until it answers 200; resolves with the moment (seconds since boot) it did. */
async function firstOk(url: string, timeoutMs: number, onPoll: () => void = () => undefined): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    onPoll();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200) return uptimeSeconds();
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

interface Start {
  readonly wallMs: number;
  readonly cpuMs: number;
}

async function devhostStart(variant: AppVariant, env: Record<string, string>): Promise<Start> {
  const spawned = uptimeSeconds();
  const host = await startDevhostChild(env, variant.root);
  try {
    const ok = await firstOk(`${host.baseUrl}/api/health`, 60_000);
    return { wallMs: (ok - spawned) * 1000, cpuMs: processCpuMs(host.pid) };
  } finally {
    await host.stop();
  }
}

async function realHostStart(
  variant: AppVariant,
  build: HostBuild,
  extensionsBin: string,
  settings: Record<string, string>,
  scratch: string,
): Promise<Start> {
  const appDir = copyApp({ appRoot: variant.root, extensionsBin, parent: scratch });
  cacheForCopy(appDir);
  const port = await freePort();
  let worker: number | undefined;
  // The host's Node worker: the only process whose command line names this copy of the host build.
  const findWorker = (): void => {
    worker ??= findProcess([build.dir, 'nodejsWorker.js']);
  };
  const ok = firstOk(`http://127.0.0.1:${port}/api/health`, 180_000, findWorker);
  const host = await startRealHost({ build, appDir, settings, port, startTimeoutMs: 180_000 });
  try {
    const at = await ok;
    findWorker();
    if (worker === undefined) throw new Error('the Node worker process was not found');
    return { wallMs: (at - processStartSeconds(worker)) * 1000, cpuMs: processCpuMs(worker) };
  } finally {
    await host.stop();
    rmSync(appDir, { recursive: true, force: true });
  }
}

/** Whether the .NET SDK the real host runs on is installed. */
function hasDotnet(): boolean {
  return spawnSync('dotnet', ['--version'], { encoding: 'utf8' }).status === 0;
}

function startRows(results: ReadonlyMap<string, Start[]>): Row[] {
  return [...results].map(([name, starts]) => ({
    'app loaded': name,
    'wall ms (median)': median(starts.map((s) => s.wallMs)),
    'wall ms (quartiles)': quartiles(starts.map((s) => s.wallMs)),
    'CPU ms (median)': median(starts.map((s) => s.cpuMs)),
    'CPU ms (quartiles)': quartiles(starts.map((s) => s.cpuMs)),
  }));
}

/** Runs `start` for each variant, `rounds` times in rotated order, after one unmeasured start of each. */
async function hostPhase(
  variants: readonly AppVariant[],
  rounds: number,
  start: (v: AppVariant) => Promise<Start>,
): Promise<Map<string, Start[]>> {
  for (const v of variants) await start(v);
  const results = new Map<string, Start[]>(variants.map((v) => [v.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const v of rotated(variants, round)) results.get(v.name)?.push(await start(v));
  }
  return results;
}

function pairs(
  results: ReadonlyMap<string, Start[]>,
  value: string,
  baseline: string,
  field: keyof Start,
): { value: number; baseline: number }[] {
  const a = results.get(value) ?? [];
  const b = results.get(baseline) ?? [];
  return a.map((s, i) => ({ value: s[field], baseline: b[i]?.[field] ?? NaN }));
}

async function main(): Promise<void> {
  header('coldstart');
  const tsc = tscVariant();
  const bundle = bundleVariant();
  const noCache = bundleWithoutCacheVariant();
  const before = await bundleBeforeVariant();
  const variants = [tsc, esbuildPerFileVariant(), before, noCache, bundle];
  const env = { ...process.env, ...sampleSettings(), AzureWebJobsStorage: 'UseDevelopmentStorage=true' };

  const loads = new Map<string, LoadFigures[]>(variants.map((v) => [v.name, []]));
  for (const v of variants) loadOnce(v, env); // the file cache warm for each
  for (let round = 0; round < loadRounds; round++) {
    for (const v of rotated(variants, round)) loads.get(v.name)?.push(loadOnce(v, env));
  }
  table(
    `Loading the app's entry in a fresh Node process (${loadRounds} runs each, the devhost's @azure/functions-core installed first)`,
    [...loads].map(([name, runs]) => ({
      'app loaded': name,
      'load CPU ms (median)': median(runs.map((r) => r.loadCpuMs)),
      'load CPU ms (quartiles)': quartiles(runs.map((r) => r.loadCpuMs)),
      'process CPU ms (median)': median(runs.map((r) => r.processCpuMs)),
      functions: runs[0]?.functions ?? 0,
    })),
  );
  const bundleLoads = loads.get(bundle.name) ?? [];
  // A figure of the bundle is one of its cache only if every load took it.
  const compiled = new Set(bundleLoads.map((r) => r.codeCache));
  if (compiled.size !== 1 || !compiled.has('accepted'))
    throw new Error(`the bundle's loads compiled it as ${[...compiled].join(', ')}, not from its code cache`);
  const tscLoads = loads.get(tsc.name) ?? [];
  const bundleMedian = median(bundleLoads.map((r) => r.loadCpuMs));
  console.log(`bundle load CPU: ${fmt(bundleMedian / 1000, 3)} s (median) [target ≤ 0.3 s: ${bundleMedian <= 300 ? 'met' : 'NOT met'}]`);
  pairedRatio(
    'bundle ÷ per-file tsc build (load CPU)',
    bundleLoads.map((r, i) => ({ value: r.loadCpuMs, baseline: tscLoads[i]?.loadCpuMs ?? NaN })),
    { atMost: 0.33 },
  );
  const beforeLoads = loads.get(before.name) ?? [];
  pairedRatio(
    'bundle ÷ the bundle of 11-28 (load CPU)',
    bundleLoads.map((r, i) => ({ value: r.loadCpuMs, baseline: beforeLoads[i]?.loadCpuMs ?? NaN })),
  );
  const noCacheLoads = loads.get(noCache.name) ?? [];
  pairedRatio(
    'bundle ÷ the bundle without its code cache (load CPU)',
    bundleLoads.map((r, i) => ({ value: r.loadCpuMs, baseline: noCacheLoads[i]?.loadCpuMs ?? NaN })),
  );

  const azurite = await startAzurite({});
  try {
    const settings = { ...sampleSettings(), AzureWebJobsStorage: azurite.connectionString };
    const devhost = await hostPhase([tsc, noCache, bundle], hostRounds, (v) => devhostStart(v, settings));
    table(`devhost: spawn → first 200 of GET /api/health (${hostRounds} starts each, after one unmeasured)`, startRows(devhost));
    pairedRatio('devhost: bundle ÷ per-file tsc build (CPU to the first 200)', pairs(devhost, bundle.name, tsc.name, 'cpuMs'));
    pairedRatio('devhost: bundle ÷ without its code cache (CPU to the first 200)', pairs(devhost, bundle.name, noCache.name, 'cpuMs'));

    const source = configuredHostBuild();
    if (source === undefined || !hasDotnet()) {
      console.log(
        'SKIPPED the real host: set FUNCTIONS_HOST_BUILD to a host build and install dotnet (docs/local-development.md#the-real-functions-host)',
      );
      return;
    }
    const scratch = mkdtempSync(join(tmpdir(), 'tallyho-coldstart-'));
    try {
      const build = copyHostBuild(source, { parent: scratch });
      const extensionsBin = await buildExtensions({
        project: join(repoRoot, 'extensions.csproj'),
        cacheDir: join(repoRoot, 'node_modules', '.cache', 'functions-extensions'),
      });
      const real = await hostPhase([tsc, noCache, bundle], hostRounds, (v) => realHostStart(v, build, extensionsBin, settings, scratch));
      table(
        `real host: Node worker start → first 200 of GET /api/health (${hostRounds} starts each, after one unmeasured)`,
        startRows(real),
      );
      pairedRatio('real host: bundle ÷ per-file tsc build (worker CPU to the first 200)', pairs(real, bundle.name, tsc.name, 'cpuMs'));
      pairedRatio('real host: bundle ÷ per-file tsc build (worker start → first 200)', pairs(real, bundle.name, tsc.name, 'wallMs'));
      pairedRatio(
        'real host: bundle ÷ without its code cache (worker CPU to the first 200)',
        pairs(real, bundle.name, noCache.name, 'cpuMs'),
      );
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  } finally {
    await azurite.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
