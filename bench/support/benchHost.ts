/**
 * The host a benchmark talks to over HTTP, chosen by the environment:
 * - `BENCH_URL=http://…` — a host that is already running (keys from BENCH_ADMIN_KEY and
 *   BENCH_FUNCTION_KEY); storage and Durable work are not counted then (no proxy is in its path);
 * - `BENCH_HOST=real` (or `--real-host`) — the real Functions host (a build named by
 *   FUNCTIONS_HOST_BUILD, served through devhost/realHost on a copy of this app);
 * - otherwise the devhost, started in this process.
 * The started hosts run on a fresh Azurite behind a counting proxy (unless BENCH_STORAGE=direct), so every storage request the
 * host, its worker and the Durable extension send is counted, and Durable work is counted too: the
 * messages put on the task hub's control and work-item queues (the real host's Azure Storage
 * provider; the devhost's engine keeps its queues in memory) and the executions of orchestrator,
 * activity and entity functions (the real host's `Executing 'Functions.…'` log lines; the devhost's
 * invoker).
 *
 * `BENCH_STORAGE=direct`: the host talks to Azurite itself, as an app in Azure talks to its storage
 * account, and nothing is counted: to see what the proxy adds to latencies. It is not free: a
 * JavaScript HTTP server in the benchmark's process that parses and forwards every request (about a
 * core of this 2-core machine while a release fans 1,000 actions out), so each storage call of the
 * host crosses two processes, while a baseline the benchmark sends itself shares its loop.
 */
import { join, resolve } from 'node:path';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

import { startAzurite } from '../../devhost/azurite';
import { defaultExtensions } from '../../devhost/extensions';
import { startHost } from '../../devhost/host';
import { buildExtensions } from '../../devhost/realHost/extensions';
import { configuredHostBuild, copyHostBuild } from '../../devhost/realHost/hostBuild';
import { copyApp } from '../../devhost/realHost/appCopy';
import { startRealHost } from '../../devhost/realHost/process';
import { provisionJobQueues } from '../../test/support/provision';
import { type StorageRequest, startCountingProxy } from './countingProxy';
import { findProcesses } from './proc';

export type BenchHostKind = 'devhost' | 'real host' | 'external host';

/** What a phase of a benchmark cost, as counted between two `take()`s. */
export interface WorkCount {
  /** Every storage request (what Azure Storage bills as transactions). */
  readonly storage: number;
  /** Messages put on the task hub's control and work-item queues (Azure Storage provider only). */
  readonly durableMessages: number | undefined;
  /** Orchestrator episodes, activity executions and entity batches. */
  readonly durableExecutions: number | undefined;
  /** Storage requests by service and table/queue/container, for reading a phase's cost closely. */
  readonly byResource: ReadonlyMap<string, number>;
}

export interface BenchHost {
  readonly kind: BenchHostKind;
  readonly baseUrl: string;
  /** The master key (admin routes) and a function key, where keys are on. */
  readonly keys: { readonly admin?: string; readonly function?: string };
  /** Whether storage and Durable work are counted. */
  readonly counted: boolean;
  /** A connection string for Azurite itself (not through the proxy), for a benchmark's own reads. */
  readonly storageConnection: string | undefined;
  /** A connection string as the host reaches storage: through the counting proxy, or Azurite itself with BENCH_STORAGE=direct (for a baseline's writes). */
  readonly hostStorageConnection: string | undefined;
  /** Work counted since the host started (subtract two of these for a phase: `workBetween`). */
  totals(): WorkCount;
  /** The host's own output (the real host's; the devhost in this process writes to this process's). */
  output(): string;
  /** The app's module, as the host loaded it (devhost in this process only). */
  appModule<T>(path: string): Promise<T | undefined>;
  /** The processes that serve (the real host and its worker; this process for the devhost in it; none for an external host). */
  processIds(): number[];
  /** The Azurite this benchmark started (none for an external host). */
  readonly storageProcessId?: number;
  stop(): Promise<void>;
}

export interface BenchHostOptions {
  /** Settings for the app and host (the task hub and storage are set here). */
  readonly env: Readonly<Record<string, string>>;
}

const repoRoot = resolve(__dirname, '..', '..', '..');

export function benchHostKind(argv: readonly string[] = process.argv): BenchHostKind {
  if ((process.env.BENCH_URL ?? '') !== '') return 'external host';
  if (process.env.BENCH_HOST === 'real' || argv.includes('--real-host')) return 'real host';
  return 'devhost';
}

const durableQueue = /^\/[^/]+\/([a-z0-9-]+)-(control-\d+|workitems)\/messages(\?|$)/;

function resourceOf(r: StorageRequest): string {
  const segment = r.path.split('?')[0]?.split('/')[2] ?? '';
  const table = segment.replace(/\(.*$/, '');
  return `${r.service}:${table.replace(/-control-\d+$/, '-control').replace(/^\$batch$/, '$batch')}`;
}

/** Running totals of what the proxy and the host's executions report. */
class Tally {
  private storage = 0;
  private durableMessages = 0;
  private executions = 0;
  private readonly byResource = new Map<string, number>();

  constructor(
    private readonly takeRequests: () => StorageRequest[],
    private readonly takeExecutions: () => number,
    private readonly durableQueues: boolean,
  ) {}

  totals(): WorkCount {
    for (const r of this.takeRequests()) {
      this.storage++;
      const key = resourceOf(r);
      this.byResource.set(key, (this.byResource.get(key) ?? 0) + 1);
      if (r.service === 'queue' && r.method === 'POST' && durableQueue.test(r.path)) this.durableMessages++;
    }
    this.executions += this.takeExecutions();
    return {
      storage: this.storage,
      durableMessages: this.durableQueues ? this.durableMessages : undefined,
      durableExecutions: this.executions,
      byResource: new Map(this.byResource),
    };
  }
}

/** What happened between two `totals()`. */
export function workBetween(before: WorkCount, after: WorkCount): WorkCount {
  const byResource = new Map<string, number>();
  for (const [k, v] of after.byResource) {
    const d = v - (before.byResource.get(k) ?? 0);
    if (d !== 0) byResource.set(k, d);
  }
  const minus = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? undefined : a - (b ?? 0));
  return {
    storage: after.storage - before.storage,
    durableMessages: minus(after.durableMessages, before.durableMessages),
    durableExecutions: minus(after.durableExecutions, before.durableExecutions),
    byResource,
  };
}

/** Function names by trigger kind, from the host's admin API (both hosts serve it). */
async function durableFunctionNames(baseUrl: string, masterKey: string | undefined): Promise<Set<string>> {
  const res = await fetch(`${baseUrl}/admin/functions`, { headers: masterKey === undefined ? {} : { 'x-functions-key': masterKey } });
  if (res.status !== 200) throw new Error(`GET /admin/functions answered ${res.status}`);
  const functions = (await res.json()) as { name: string; config: { bindings: { type: string }[] } }[];
  const durable = new Set(['orchestrationtrigger', 'activitytrigger', 'entitytrigger']);
  return new Set(functions.filter((f) => f.config.bindings.some((b) => durable.has(b.type.toLowerCase()))).map((f) => f.name));
}

/**
 * App settings a run adds (BENCH_SETTINGS, a JSON object of strings), printed: e.g. host.json values
 * through `AzureFunctionsJobHost__…`, to compare a setting's figures against the defaults'.
 */
function extraSettings(): Record<string, string> {
  const raw = process.env.BENCH_SETTINGS;
  if (raw === undefined || raw === '') return {};
  const parsed = JSON.parse(raw) as unknown;
  if (typeof parsed !== 'object' || parsed === null || Object.values(parsed).some((v) => typeof v !== 'string'))
    throw new Error('BENCH_SETTINGS must be a JSON object of strings');
  console.log(`settings added by BENCH_SETTINGS: ${JSON.stringify(parsed)}`);
  return parsed as Record<string, string>;
}

/** Whether the started hosts talk to Azurite without the counting proxy (BENCH_STORAGE=direct; see the top). */
export function storageDirect(): boolean {
  return process.env.BENCH_STORAGE === 'direct';
}

/** The proxy's records, or none when the host talks to Azurite directly. */
interface Counting {
  readonly take: () => StorageRequest[];
  readonly counted: boolean;
}

export async function startBenchHost(options: BenchHostOptions): Promise<BenchHost> {
  const kind = benchHostKind();
  if (kind === 'external host') {
    const baseUrl = (process.env.BENCH_URL as string).replace(/\/+$/, '');
    const keys = {
      ...(process.env.BENCH_ADMIN_KEY ? { admin: process.env.BENCH_ADMIN_KEY } : {}),
      ...(process.env.BENCH_FUNCTION_KEY ? { function: process.env.BENCH_FUNCTION_KEY } : {}),
    };
    const nothing: WorkCount = { storage: 0, durableMessages: undefined, durableExecutions: undefined, byResource: new Map() };
    return {
      kind,
      baseUrl,
      keys,
      counted: false,
      storageConnection: undefined,
      hostStorageConnection: undefined,
      totals: () => nothing,
      output: () => '',
      appModule: () => Promise.resolve(undefined),
      processIds: () => [],
      stop: () => Promise.resolve(),
    };
  }
  const azurite = await startAzurite({});
  const proxy = storageDirect() ? undefined : await startCountingProxy(azurite.ports);
  const settings = { ...options.env, ...extraSettings(), AzureWebJobsStorage: proxy?.connectionString ?? azurite.connectionString };
  const closeStorage = async (): Promise<void> => {
    await proxy?.close();
    await azurite.stop();
  };
  const counting = { take: proxy?.take ?? (() => []), counted: proxy !== undefined };
  try {
    // Storage as a deployment's (its jobs queues exist): a host polling missing queues logs a 404
    // warning per poll, CPU a measured release would share the machine with.
    await provisionJobQueues({ ...settings, AzureWebJobsStorage: azurite.connectionString });
    const host =
      kind === 'real host'
        ? await startReal(settings, counting, closeStorage, azurite.connectionString)
        : await startInProcess(settings, counting, closeStorage, azurite.connectionString);
    return { ...host, ...(azurite.process.pid === undefined ? {} : { storageProcessId: azurite.process.pid }) };
  } catch (err) {
    await closeStorage();
    throw err;
  }
}

/**
 * An app folder whose `main` is the per-file build (dist/functions/index.js) rather than the bundle:
 * the devhost in this process then loads the modules `appModule` imports, so a benchmark can reach
 * the very objects the host serves with (the bundle keeps its modules to itself). The code run is the
 * same; how it loads is bench/coldstart.ts's subject.
 */
function perFileAppRoot(): string {
  const root = join(repoRoot, 'dist', 'bench-app');
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'tallyho', private: true, main: '../functions/index.js' }));
  writeFileSync(join(root, 'host.json'), readFileSync(join(repoRoot, 'host.json')));
  return root;
}

async function startInProcess(
  settings: Record<string, string>,
  counting: Counting,
  closeStorage: () => Promise<void>,
  storageConnection: string,
): Promise<BenchHost> {
  const host = await startHost({
    appRoot: perFileAppRoot(),
    port: 0,
    quiet: process.env.BENCH_VERBOSE !== '1',
    extensions: defaultExtensions(),
    env: settings,
  });
  const durable = await durableFunctionNames(host.baseUrl, host.masterKey);
  let executions = 0;
  // The durable engine invokes functions through the host's invoker: count those of durable functions.
  const invoke = host.invoker.invoke.bind(host.invoker);
  host.invoker.invoke = (request) => {
    if (durable.has(request.functionName)) executions++;
    return invoke(request);
  };
  const tally = new Tally(
    counting.take,
    () => {
      const n = executions;
      executions = 0;
      return n;
    },
    false,
  );
  return {
    kind: 'devhost',
    baseUrl: host.baseUrl,
    keys: {},
    counted: counting.counted,
    storageConnection,
    hostStorageConnection: settings.AzureWebJobsStorage,
    totals: () => tally.totals(),
    output: () => '',
    // The host loaded the per-file build through Node's own loader: importing a module of it gives the host's copy.
    appModule: async <T>(path: string) => (await import(join(repoRoot, 'dist', path))) as T,
    processIds: () => [process.pid],
    async stop() {
      await host.stop();
      await closeStorage();
    },
  };
}

async function startReal(
  settings: Record<string, string>,
  counting: Counting,
  closeStorage: () => Promise<void>,
  storageConnection: string,
): Promise<BenchHost> {
  const source = configuredHostBuild();
  if (source === undefined) throw new Error('BENCH_HOST=real needs FUNCTIONS_HOST_BUILD: a Functions host build (folder or .tar.gz)');
  const scratch = mkdtempSync(join(tmpdir(), 'tallyho-bench-host-'));
  const build = copyHostBuild(source, { parent: scratch });
  const extensionsBin = await buildExtensions({
    project: join(repoRoot, 'extensions.csproj'),
    cacheDir: join(repoRoot, 'node_modules', '.cache', 'functions-extensions'),
  });
  const appDir = copyApp({ appRoot: repoRoot, extensionsBin, parent: scratch });
  const host = await startRealHost({ build, appDir, settings, startTimeoutMs: 180_000 });
  const durable = await durableFunctionNames(host.baseUrl, host.keys.master);
  const executing = /Executing 'Functions\.([^']+)'/g;
  let read = host.output().length;
  const countExecutions = (): number => {
    const text = host.output();
    let n = 0;
    for (const m of text.slice(read).matchAll(executing)) if (durable.has(m[1] ?? '')) n++;
    read = text.length;
    return n;
  };
  const tally = new Tally(counting.take, countExecutions, true);
  return {
    kind: 'real host',
    baseUrl: host.baseUrl,
    keys: { admin: host.keys.master, function: host.keys.function },
    counted: counting.counted,
    storageConnection,
    hostStorageConnection: settings.AzureWebJobsStorage,
    totals: () => tally.totals(),
    output: () => host.output(),
    appModule: () => Promise.resolve(undefined),
    // The host and its Node worker: the processes whose command lines name this run's copies.
    processIds: () => findProcesses([scratch]),
    async stop() {
      await host.stop();
      await closeStorage();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
