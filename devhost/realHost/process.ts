/**
 * Runs a real Functions host (a `HostBuild`) serving an app copy (`copyApp`), the way `func start`
 * runs it: settings from the environment only (the host never reads local.settings.json), keys on,
 * on 127.0.0.1 at a given or free port. Facts this relies on, observed with host 4.1037 and written
 * up in devhost/docs/real-host.md:
 * - it runs on a newer .NET than the 8 it targets only with DOTNET_ROLL_FORWARD=Major;
 * - without WEBSITE_HOSTNAME every Durable client binding fails ("Webhooks are not configured");
 * - with CONTAINER_NAME set it believes it runs in a Linux container and starts differently;
 * - the Durable extension's worker-facing endpoint tries 127.0.0.1:17071 and, when that is taken,
 *   a random port in 30000–31000, so several hosts can run side by side.
 * The host and its Node worker run in a process group of their own, so a stop (or a kill, as a crash
 * would) ends both; the group dies with this process however it dies (an exit hook, and a watch
 * process for a SIGKILL: ./groupWatch.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { freePort } from '../azurite';
import { groupCpuMs } from './cpu';
import { type GroupWatch, watchGroup } from './groupWatch';
import { type HostBuild, type RealHostKeys, webHostDll } from './hostBuild';

export interface RealHostOptions {
  readonly build: HostBuild;
  /** The app copy to serve (`copyApp`). */
  readonly appDir: string;
  /** The app's settings (what local.settings.json `Values` would hold), exported to the host. */
  readonly settings: Readonly<Record<string, string>>;
  /** 0 or absent: a free port. */
  readonly port?: number;
  /** Pass the host's output through to this process's stdout. */
  readonly verbose?: boolean;
  /** Called with each piece of the host's output as it comes (a caller's report of a start still under way). */
  readonly onOutput?: (text: string) => void;
  /**
   * How long to wait for the host to report Running (default 60 s); 0: as long as it takes — until
   * it runs, exits, or `signal` aborts (a test harness's waits have no budget of their own).
   */
  readonly startTimeoutMs?: number;
  /** Aborting it during a start stops the host (SIGKILL) and fails the start. */
  readonly signal?: AbortSignal;
}

export interface RealHost {
  readonly baseUrl: string;
  readonly keys: RealHostKeys;
  /** Everything the host printed since it was first started. */
  output(): string;
  /** Stops it (SIGTERM: the host drains, the worker runs its shutdown hooks), then starts it again on the same port. */
  restart(options?: { kill?: boolean }): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs` when it has not exited. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL to the host and its worker, as a crash would end them; `restart()` starts it again. */
  kill(): Promise<void>;
  /** CPU time (ms) the host and its worker have used since this start; NaN when it is not running, or without Linux's /proc. */
  cpuMs(): number;
}

/** Settings that would change how the host starts (or that belong to another host), removed from what it inherits. */
const notInherited = [
  'CONTAINER_NAME',
  'FUNCTIONS_KEY',
  'FUNCTIONS_ADMIN_KEY',
  'DEVHOST_VIRTUAL_CLOCK',
  'DEVHOST_VIRTUAL_CLOCK_START',
  'ASPNETCORE_URLS',
  'PORT',
];

function hostEnvironment(options: RealHostOptions, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of notInherited) delete env[name];
  const home = join(options.build.dir, '..', 'home');
  mkdirSync(home, { recursive: true });
  return {
    ...env,
    'AzureFunctionsJobHost__logging__logLevel__Azure.Core': 'Warning',
    ...options.settings,
    DOTNET_ROLL_FORWARD: 'Major',
    DOTNET_NOLOGO: '1',
    DOTNET_CLI_TELEMETRY_OPTOUT: '1',
    HOME: home,
    AzureWebJobsScriptRoot: options.appDir,
    AzureWebJobsSecretStorageType: 'files',
    FUNCTIONS_WORKER_RUNTIME: 'node',
    FUNCTIONS_EXTENSION_VERSION: '~4',
    AZURE_FUNCTIONS_ENVIRONMENT: 'Development',
    ASPNETCORE_URLS: `http://127.0.0.1:${port}`,
    WEBSITE_HOSTNAME: `localhost:${port}`,
  };
}

/**
 * The process groups of the hosts this process started and has not stopped. A host runs in a group
 * of its own (so a kill reaches its worker too), which also means it would outlive this process:
 * whenever this process exits (a second Ctrl+C, a test worker ending), they are killed with it.
 */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

function track(pid: number): void {
  liveGroups.add(pid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const group of liveGroups) killGroup(group, 'SIGKILL');
  });
}

class RealHostProcess implements RealHost {
  private child: ChildProcess | undefined;
  private watch: GroupWatch | undefined;
  private log = '';
  baseUrl = '';

  constructor(
    private readonly options: RealHostOptions,
    private port: number,
  ) {}

  get keys(): RealHostKeys {
    return this.options.build.keys;
  }

  output(): string {
    return this.log;
  }

  cpuMs(): number {
    const pid = this.child?.pid;
    return pid === undefined ? NaN : groupCpuMs(pid);
  }

  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    this.baseUrl = `http://127.0.0.1:${this.port}`;
    const child = spawn('dotnet', [join(this.options.build.dir, webHostDll)], {
      cwd: this.options.build.dir,
      env: hostEnvironment(this.options, this.port),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    if (child.pid !== undefined) {
      track(child.pid);
      this.watch = watchGroup(child.pid);
    }
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString();
      this.log += text;
      this.options.onOutput?.(text);
      if (this.options.verbose === true) process.stdout.write(text);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    // Running counts only once this process has said it bound the port (Kestrel's "Now listening on"
    // line). A host that lost its port to another keeps retrying, then exits, while the status route
    // on that port answers Running for the other host — with the same keys, as both run one build.
    // Taking that answer as ours once had a test file talk to another file's host (CI, host 4.1037).
    const from = this.log.length;
    const bound = (): boolean => this.log.includes(`Now listening on: ${this.baseUrl}`, from);
    let exited = false;
    child.once('exit', () => (exited = true));
    const limitMs = this.options.startTimeoutMs ?? 60_000;
    const deadline = limitMs === 0 ? Number.POSITIVE_INFINITY : Date.now() + limitMs;
    for (;;) {
      if (exited) {
        await this.end('SIGKILL');
        throw new Error(`The Functions host exited during start-up${firstError(this.log)}:\n${this.log.slice(-6000)}`);
      }
      if (this.options.signal?.aborted === true) {
        await this.end('SIGKILL');
        throw new Error(`The Functions host's start was given up${firstError(this.log)}:\n${this.log.slice(-6000)}`);
      }
      if (Date.now() > deadline) {
        await this.end('SIGKILL');
        throw new Error(
          `The Functions host did not report Running within ${limitMs} ms` + `${firstError(this.log)}:\n${this.log.slice(-6000)}`,
        );
      }
      if (bound() && (await this.running())) return;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** The host's own status route says Running (it answers only once its job host has started). */
  private async running(): Promise<boolean> {
    try {
      const res = await fetch(`${this.baseUrl}/admin/host/status`, {
        headers: { 'x-functions-key': this.keys.master },
        signal: AbortSignal.timeout(5000),
      });
      if (res.status !== 200) {
        await res.body?.cancel();
        return false;
      }
      const body = (await res.json()) as { state?: string };
      return body.state === 'Running';
    } catch {
      return false;
    }
  }

  /**
   * Stops the host and waits for it to exit (SIGKILL to the group after `graceMs`). A graceful stop
   * signals the host process alone, as the platform does: the host then sends its worker
   * WorkerTerminate and the worker runs the app's appTerminate hooks. A SIGTERM to the whole group
   * reaches the Node worker too, which exits at once, before the host can tell it to finish (on host
   * 4.1037 a sequence's unused block was then never returned; test/e2e/sequences.test.ts).
   */
  private async end(signal: 'SIGTERM' | 'SIGKILL', graceMs = 20_000): Promise<void> {
    const child = this.child;
    const watch = this.watch;
    this.child = undefined;
    this.watch = undefined;
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
      // Exited by itself (a crash, a failed start): what is left of its group goes, and so does the watch.
      if (child?.pid !== undefined) {
        killGroup(child.pid, 'SIGKILL');
        liveGroups.delete(child.pid);
      }
      watch?.release();
      return;
    }
    const pid = child.pid;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    if (signal === 'SIGTERM') child.kill('SIGTERM');
    else killGroup(pid, signal);
    const timer = Number.isFinite(graceMs) ? setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs) : undefined;
    await exited;
    clearTimeout(timer);
    // The worker is in the same group; make sure nothing of it outlives the host.
    killGroup(pid, 'SIGKILL');
    liveGroups.delete(pid);
    watch?.release();
  }

  stop(graceMs?: number): Promise<void> {
    return this.end('SIGTERM', graceMs);
  }

  kill(): Promise<void> {
    return this.end('SIGKILL');
  }

  async restart(options: { kill?: boolean } = {}): Promise<void> {
    // A graceful stop here is part of what the caller observes (the drain, the shutdown hooks): it is
    // waited for however long it takes, never cut short by a kill.
    await this.end(options.kill === true ? 'SIGKILL' : 'SIGTERM', Number.POSITIVE_INFINITY);
    await this.start();
  }
}

export async function startRealHost(options: RealHostOptions): Promise<RealHost> {
  // A port chosen free may be taken by another process before Kestrel binds it: then choose again.
  for (let attempt = 1; ; attempt++) {
    const host = new RealHostProcess(options, options.port ?? 0);
    try {
      await host.start();
      return host;
    } catch (err) {
      const taken = err instanceof Error && /address already in use/i.test(err.message);
      if (!taken || (options.port ?? 0) !== 0 || attempt >= 3) throw err;
    }
  }
}

/**
 * The first exception line of the host's output, for a start-up failure: a host that cannot start
 * retries and logs the same stack many times, so the tail alone often hides the message.
 */
function firstError(log: string): string {
  const line = /^.*\b\w+(?:Exception|Error): .*$/m.exec(log)?.[0]?.trim();
  return line === undefined ? '' : ` (first error: ${line.slice(0, 600)})`;
}
