/**
 * N instances of the app on one storage account, as Flex Consumption runs them: the same package,
 * the same settings, one host id (so the host's singleton locks — timer triggers — are shared, as
 * on Azure, where every instance of an app has the app's host id) and, on the real host, one
 * Durable task hub whose control-queue partitions move between the instances as they come and go.
 *
 * On the devhost each instance gets a task hub of its own: the devhost's Durable engine is one
 * process's (its log refuses a second writer: devhost/README.md, "One devhost per task hub"), so
 * the devhost variant covers what the instances share through storage alone — sequences, counters,
 * gates' rows and watchers, jobs' queues, leases and caps — and never Durable across instances.
 *
 * An instance is stopped two ways, as Azure stops them: `kill` (SIGKILL: a crash, nothing drains)
 * and `stop` (SIGTERM: a scale-in; the host drains and the app's shutdown hooks run).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

import { copyApp } from '../../devhost/realHost/appCopy';
import { processCpuMs } from '../../devhost/realHost/cpu';
import { buildExtensions } from '../../devhost/realHost/extensions';
import { configuredHostBuild, copyHostBuild, type HostBuild, newHostKey } from '../../devhost/realHost/hostBuild';
import { precompileHost } from '../../devhost/realHost/readyToRun';
import { type RealHost, startRealHost } from '../../devhost/realHost/process';
import { deployed } from '../support/deployment';
import { counted } from '../support/hostCosts';

export type HostKind = 'devhost' | 'real';

/** The repository: the folder above this file (or above the soak's bundle of it) that holds the app's host.json. */
function findRepoRoot(from: string): string {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'host.json')) && existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`No app folder above ${from}`);
  }
}

const repoRoot = findRepoRoot(__dirname);

export interface Keys {
  readonly admin: string;
  readonly function: string;
}

export interface ClusterOptions {
  readonly kind: HostKind;
  readonly instances: number;
  /** The storage account every instance uses: the connection string instance `i` reaches it by. */
  readonly storage: (instance: number) => string;
  /** The task hub (real host: shared; devhost: each instance's is `<taskHub>i<n>`). */
  readonly taskHub: string;
  /** App settings on top of local.settings.sample.json (host.json values through AzureFunctionsJobHost__…). */
  readonly settings?: Readonly<Record<string, string>>;
}

/** One instance slot: its process comes and goes, its number stays. */
export interface Instance {
  readonly index: number;
  /** The Durable worker name of its current life (real host). */
  readonly worker: string | undefined;
  /** Where it listens while up (a slot keeps its port across restarts). */
  readonly baseUrl: string | undefined;
  readonly up: boolean;
  /** Everything it printed, across its restarts. */
  output(): string;
}

/** The app's documented defaults, so a run does not depend on a developer's local.settings.json. */
function sampleSettings(): Record<string, string> {
  const file = join(repoRoot, 'local.settings.sample.json');
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { Values?: Record<string, unknown> };
  return Object.fromEntries(Object.entries(parsed.Values ?? {}).map(([k, v]) => [k, String(v)]));
}

interface Slot extends Instance {
  start(): Promise<void>;
  end(how: 'kill' | 'stop'): Promise<void>;
  dispose(): Promise<void>;
}

class RealSlot implements Slot {
  private host: RealHost | undefined;
  private port = 0;
  private lives = 0;
  private earlier = '';
  up = false;
  worker: string | undefined;

  constructor(
    readonly index: number,
    private readonly build: HostBuild,
    private readonly appDir: string,
    private readonly settings: Record<string, string>,
    private readonly taskHub: string,
  ) {}

  get baseUrl(): string | undefined {
    return this.up ? this.host?.baseUrl : undefined;
  }

  output(): string {
    return this.earlier + (this.host?.output() ?? '');
  }

  async start(): Promise<void> {
    this.earlier += this.host?.output() ?? '';
    // Each life a worker of its own in the task hub's partition table. The Durable extension names its
    // worker `<WEBSITE_CURRENT_STAMPNAME>:<RoleInstanceId>` when the platform sets those, as Azure does
    // per instance, and the machine's name otherwise (DurableTask.AzureStorage's default) — which here
    // would make every instance the same worker, each owning every partition (split brain).
    const what = this.lives === 0 ? 'start' : 'restart';
    const roleInstance = `${this.taskHub}-${this.index}-${this.lives++}`;
    this.worker = `scaleout:${roleInstance}`;
    this.host = await counted(
      'real',
      what,
      () =>
        startRealHost({
          build: this.build,
          appDir: this.appDir,
          settings: { ...this.settings, WEBSITE_CURRENT_STAMPNAME: 'scaleout', RoleInstanceId: roleInstance },
          port: this.port,
          // Until it listens or exits, however busy the machine (a test's jest timeout is the safety net).
          startTimeoutMs: 0,
        }),
      { started: (host) => host.cpuMs() },
    );
    // The slot keeps its port, as an instance keeps its address across a restart.
    this.port = Number(new URL(this.host.baseUrl).port);
    this.up = true;
  }

  async end(how: 'kill' | 'stop'): Promise<void> {
    this.up = false;
    // A graceful stop drains for as long as the host takes (it ends its own drain): a deadline here
    // would turn a slow scale-in on a busy machine into a kill, which the checkers judge otherwise.
    await this.endLife(() => (how === 'stop' ? this.host?.stop(Number.POSITIVE_INFINITY) : this.host?.kill()));
  }

  async dispose(): Promise<void> {
    this.up = false;
    await this.endLife(() => this.host?.stop(5_000));
  }

  /** An end of this life, in the run's account of its hosts with what the life cost (../support/hostCosts.ts). */
  private async endLife(ending: () => Promise<void> | undefined): Promise<void> {
    // One read of /proc: NaN for a life already ended (killed, then disposed at the run's end), not ended again.
    const endedMs = this.host?.cpuMs() ?? NaN;
    if (!Number.isFinite(endedMs)) return ending();
    await counted('real', 'stop', async () => ending(), { ended: () => endedMs });
  }
}

/** A devhost child process (dist/devhost/cli.js), keys on, on a port it keeps across restarts. */
class DevhostSlot implements Slot {
  readonly worker = undefined;
  private child: ChildProcess | undefined;
  private log = '';
  private port = 0;
  up = false;

  constructor(
    readonly index: number,
    private readonly env: Record<string, string>,
  ) {}

  get baseUrl(): string | undefined {
    return this.up ? `http://127.0.0.1:${this.port}` : undefined;
  }

  output(): string {
    return this.log;
  }

  start(): Promise<void> {
    return counted('devhost', this.port === 0 ? 'start' : 'restart', () => this.spawnAndListen(), {
      started: () => processCpuMs(this.child?.pid),
    });
  }

  private async spawnAndListen(): Promise<void> {
    const cli = join(repoRoot, 'dist', 'devhost', 'cli.js');
    const child = spawn(process.execPath, [cli, '--app', repoRoot, '--port', String(this.port), '--quiet'], {
      cwd: repoRoot,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const from = this.log.length;
    const listening = new Promise<number>((resolvePort, reject) => {
      const onData = (chunk: Buffer): void => {
        this.log += chunk.toString();
        const m = /devhost listening on http:\/\/[^:]+:(\d+)/.exec(this.log.slice(from));
        if (m !== null) resolvePort(Number(m[1]));
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) =>
        reject(new Error(`devhost ${this.index} exited with ${code} before listening:\n${this.log.slice(from)}`)),
      );
    });
    // Until it listens or exits, however busy the machine (a test's jest timeout is the safety net).
    this.port = await listening;
    this.up = true;
  }

  /** A kill, or a graceful stop that drains for as long as the devhost takes (as the real slot's). */
  end(how: 'kill' | 'stop'): Promise<void> {
    return this.signal(how === 'kill' ? 'SIGKILL' : 'SIGTERM', Number.POSITIVE_INFINITY);
  }

  /** The end of the run: a graceful stop, cut short after a minute (nothing is judged from it). */
  dispose(): Promise<void> {
    return this.signal('SIGTERM', 60_000);
  }

  private async signal(signal: 'SIGKILL' | 'SIGTERM', killAfterMs: number): Promise<void> {
    this.up = false;
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    await counted(
      'devhost',
      'stop',
      async () => {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill(signal);
        const timer = Number.isFinite(killAfterMs) ? setTimeout(() => child.kill('SIGKILL'), killAfterMs) : undefined;
        await exited;
        clearTimeout(timer);
      },
      { ended: () => processCpuMs(child.pid) },
    );
  }
}

export class Cluster {
  private constructor(
    readonly kind: HostKind,
    readonly keys: Keys,
    readonly taskHub: string,
    private readonly slots: Slot[],
    private readonly scratch: string | undefined,
  ) {}

  static async start(options: ClusterOptions): Promise<Cluster> {
    if (!existsSync(join(repoRoot, 'dist', 'functions', 'index.js')))
      throw new Error('dist/ is missing: run `npm run build` before a scale-out run');
    const hostId = `scaleout-${options.taskHub.toLowerCase()}`.slice(0, 32);
    const settings: Record<string, string> = {
      ...sampleSettings(),
      ...options.settings,
      AzureFunctionsWebHost__hostid: hostId,
    };
    let slots: Slot[];
    let keys: Keys;
    let scratch: string | undefined;
    if (options.kind === 'real') {
      const source = configuredHostBuild();
      if (source === undefined) throw new Error('The real-host scale-out run needs FUNCTIONS_HOST_BUILD (a Functions host build)');
      scratch = mkdtempSync(join(tmpdir(), 'tallyho-scaleout-'));
      const build = copyHostBuild(source, { parent: scratch });
      const built = await buildExtensions({
        project: join(repoRoot, 'extensions.csproj'),
        cacheDir: join(repoRoot, 'node_modules', '.cache', 'functions-extensions'),
      });
      const extensionsBin = await precompileHost(build, built, scratch);
      // One package for every instance, as Azure mounts the same one on each.
      const appDir = copyApp({ appRoot: repoRoot, extensionsBin, parent: scratch, ...deployed });
      const hub = { AzureFunctionsJobHost__extensions__durableTask__hubName: options.taskHub, TALLYHO_TASK_HUB: options.taskHub };
      keys = { admin: build.keys.master, function: build.keys.function };
      slots = Array.from(
        { length: options.instances },
        (_, i) => new RealSlot(i, build, appDir, { ...settings, ...hub, AzureWebJobsStorage: options.storage(i) }, options.taskHub),
      );
    } else {
      keys = { admin: newHostKey(), function: newHostKey() };
      const inherited = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
      slots = Array.from({ length: options.instances }, (_, i) => {
        const hub = `${options.taskHub}i${i}`;
        return new DevhostSlot(i, {
          ...inherited,
          ...settings,
          AzureWebJobsStorage: options.storage(i),
          AzureFunctionsJobHost__extensions__durableTask__hubName: hub,
          TALLYHO_TASK_HUB: hub,
          FUNCTIONS_ADMIN_KEY: keys.admin,
          FUNCTIONS_KEY: keys.function,
        });
      });
    }
    const cluster = new Cluster(options.kind, keys, options.taskHub, slots, scratch);
    try {
      // One after another: each start is CPU-heavy (the real host's is several seconds of two cores).
      for (const slot of slots) await slot.start();
    } catch (err) {
      await cluster.dispose();
      throw err;
    }
    return cluster;
  }

  get instances(): readonly Instance[] {
    return this.slots;
  }

  /** The base URLs of the instances that are up now (what the front door routes to). */
  liveUrls(): { index: number; baseUrl: string }[] {
    return this.slots.flatMap((s) => (s.up && s.baseUrl !== undefined ? [{ index: s.index, baseUrl: s.baseUrl }] : []));
  }

  /** SIGKILL: a crash. Nothing drains, no shutdown hook runs. */
  kill(index: number): Promise<void> {
    return this.slot(index).end('kill');
  }

  /** SIGTERM: a scale-in. The host drains its requests and the app's shutdown hooks run. */
  stop(index: number): Promise<void> {
    return this.slot(index).end('stop');
  }

  /** Starts an instance that was killed or stopped, on the same port (a new instance in its slot). */
  start(index: number): Promise<void> {
    return this.slot(index).start();
  }

  async dispose(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.dispose().catch(() => undefined)));
    if (this.scratch !== undefined) rmSync(this.scratch, { recursive: true, force: true });
  }

  private slot(index: number): Slot {
    const slot = this.slots[index];
    if (slot === undefined) throw new Error(`No instance ${index}`);
    return slot;
  }
}
