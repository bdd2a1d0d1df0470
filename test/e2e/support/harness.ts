/**
 * End-to-end host for HTTP-only tests. By default each `startDevhost()` spawns the compiled devhost
 * (`dist/devhost/cli.js`; jest runs after `npm run build`) as a child process on a free port,
 * against the test Azurite (`TEST_STORAGE_CONNECTION`), with the app's sample settings, a task hub
 * of its own and the options given. With `E2E_BASE_URL` set, it targets that host instead (e.g.
 * `func start`); keys then come from `E2E_FUNCTION_KEY` / `E2E_ADMIN_KEY`, and tests that need
 * devhost-only features are skipped with `devhostTest` (their name says why).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(__dirname, '..', '..', '..');
const cliPath = join(repoRoot, 'dist', 'devhost', 'cli.js');

interface HostKeys {
  readonly admin?: string;
  readonly function?: string;
}

export interface DevhostOptions {
  /** Settings for the app and host (win over everything else). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Start with `DEVHOST_VIRTUAL_CLOCK=true` (move time with `advanceClock`). */
  readonly virtualClock?: boolean;
  /** Turn on key enforcement with these keys (`FUNCTIONS_ADMIN_KEY`, `FUNCTIONS_KEY`). */
  readonly keys?: HostKeys;
  /** The app to run (default: this repository). */
  readonly appRoot?: string;
  /** The durable task hub; default: a fresh one per start (so tests never share orchestration state). */
  readonly taskHub?: string;
  /** Pass the devhost's own output through (default: kept for `output()` and shown on failure). */
  readonly verbose?: boolean;
  readonly startTimeoutMs?: number;
}

export interface RestartOptions {
  /** End the devhost with SIGKILL (no shutdown hooks, no draining) instead of SIGTERM. */
  readonly kill?: boolean;
}

export interface E2eHost {
  readonly baseUrl: string;
  /** True when `E2E_BASE_URL` points at a host this harness did not start. */
  readonly external: boolean;
  readonly keys: HostKeys;
  /** The task hub this host uses (undefined for an external host). */
  readonly taskHub: string | undefined;
  url(path: string): string;
  /** Everything the devhost printed so far. */
  output(): string;
  /**
   * Stops and starts the devhost again on the same port, storage and task hub. By default the stop
   * is graceful (SIGTERM: the host drains and runs its shutdown hooks); `{ kill: true }` sends
   * SIGKILL instead, as a crash would, so nothing the host had not yet made durable survives.
   */
  restart(options?: RestartOptions): Promise<void>;
  stop(): Promise<void>;
  /** Devhost only: moves the virtual clock forward and waits until the host has settled. */
  advanceClock(ms: number): Promise<{ now: string; steps: number }>;
}

const running = new Set<E2eHost>();

/** The hosts this test file started and has not stopped (or the external host), for failure reports. */
export function runningHosts(): readonly E2eHost[] {
  return externalHost ? [externalE2eHost()] : [...running];
}

/** True when the suite runs against an external host (E2E_BASE_URL). */
export const externalHost = process.env.E2E_BASE_URL !== undefined && process.env.E2E_BASE_URL !== '';

/** `test` for tests that need devhost-only features; skipped (with the reason in the name) against E2E_BASE_URL. */
export const devhostTest = (name: string, fn: () => Promise<void>, timeout?: number): void => {
  if (externalHost) test.skip(`${name} [skipped: needs the devhost; E2E_BASE_URL is set]`, fn);
  else test(name, fn, timeout);
};

function uniqueTaskHub(): string {
  return `e2e${randomBytes(6).toString('hex')}`;
}

/** The app's documented defaults (local.settings.sample.json), so runs do not depend on a developer's local.settings.json. */
function sampleSettings(appRoot: string): Record<string, string> {
  const file = join(appRoot, 'local.settings.sample.json');
  if (!existsSync(file)) return {};
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { Values?: Record<string, unknown> };
  return Object.fromEntries(Object.entries(parsed.Values ?? {}).map(([k, v]) => [k, String(v)]));
}

function externalE2eHost(): E2eHost {
  const baseUrl = (process.env.E2E_BASE_URL as string).replace(/\/+$/, '');
  const keys: HostKeys = {
    ...(process.env.E2E_ADMIN_KEY ? { admin: process.env.E2E_ADMIN_KEY } : {}),
    ...(process.env.E2E_FUNCTION_KEY ? { function: process.env.E2E_FUNCTION_KEY } : {}),
  };
  const unsupported = (what: string) => (): never => {
    throw new Error(`${what} needs the devhost; E2E_BASE_URL is set (use devhostTest for such tests)`);
  };
  return {
    baseUrl,
    external: true,
    keys,
    taskHub: undefined,
    url: (path) => `${baseUrl}${path}`,
    output: () => '',
    restart: unsupported('restart()'),
    stop: () => Promise.resolve(),
    advanceClock: unsupported('advanceClock()'),
  };
}

class ChildDevhost implements E2eHost {
  readonly external = false;
  baseUrl = '';
  keys: HostKeys;
  private child: ChildProcess | undefined;
  private log = '';
  private port = 0;

  constructor(
    private readonly env: Record<string, string>,
    private readonly appRoot: string,
    /** The keys the test asked for; the devhost's made-up master key is added to `keys` at each start. */
    private readonly configuredKeys: HostKeys,
    readonly taskHub: string,
    private readonly verbose: boolean,
    private readonly timeoutMs: number,
  ) {
    this.keys = configuredKeys;
  }

  url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  output(): string {
    return this.log;
  }

  async start(): Promise<void> {
    if (!existsSync(cliPath)) throw new Error(`${cliPath} does not exist: run \`npm run build\` before the e2e tests`);
    const child = spawn(process.execPath, [cliPath, '--app', this.appRoot, '--port', String(this.port), '--quiet'], {
      cwd: this.appRoot,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    // Only this start's output counts: a restart makes up a new master key.
    const from = this.log.length;
    const listening = new Promise<string>((resolveUrl, reject) => {
      const onData = (chunk: Buffer): void => {
        const text = chunk.toString();
        this.log += text;
        if (this.verbose) process.stdout.write(text);
        const m = /devhost listening on (\S+)/.exec(this.log.slice(from));
        const master = /devhost master key: (\S+)/.exec(this.log.slice(from));
        // The devhost's admin API always needs the master key: a made-up one is printed after the URL.
        if (master !== null) this.keys = { ...this.configuredKeys, admin: master[1] };
        if (m !== null && (master !== null || this.configuredKeys.admin !== undefined)) resolveUrl(m[1] as string);
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      void exited.then((code) => reject(new Error(`devhost exited with code ${code} before listening:\n${this.log}`)));
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`devhost did not start within ${this.timeoutMs} ms:\n${this.log}`)), this.timeoutMs);
    });
    try {
      this.baseUrl = await Promise.race([listening, timeout]);
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    } finally {
      clearTimeout(timer);
    }
    this.port = Number(new URL(this.baseUrl).port);
  }

  stop(): Promise<void> {
    running.delete(this);
    return this.end('SIGTERM');
  }

  /** Sends `signal` (SIGKILL after 15 s if the host is still up) and waits for the exit. */
  private async end(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }

  async restart(options: RestartOptions = {}): Promise<void> {
    await this.end(options.kill === true ? 'SIGKILL' : 'SIGTERM');
    await this.start();
  }

  async advanceClock(ms: number): Promise<{ now: string; steps: number }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.keys.admin !== undefined) headers['x-functions-key'] = this.keys.admin;
    const res = await fetch(this.url('/admin/devhost/clock'), { method: 'POST', headers, body: JSON.stringify({ advanceMs: ms }) });
    const body = (await res.json()) as { now: string; steps: number; detail?: string };
    if (res.status !== 200) throw new Error(`Advancing the clock failed (${res.status}): ${body.detail ?? JSON.stringify(body)}`);
    return body;
  }
}

export async function startDevhost(options: DevhostOptions = {}): Promise<E2eHost> {
  if (externalHost) return externalE2eHost();
  const storage = process.env.TEST_STORAGE_CONNECTION;
  if (storage === undefined) throw new Error('TEST_STORAGE_CONNECTION is not set (jest global setup starts Azurite)');
  const appRoot = resolve(options.appRoot ?? repoRoot);
  const taskHub = options.taskHub ?? uniqueTaskHub();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  Object.assign(env, sampleSettings(appRoot), {
    AzureWebJobsStorage: storage,
    AzureFunctionsJobHost__extensions__durableTask__hubName: taskHub,
    TALLYHO_TASK_HUB: taskHub,
  });
  if (options.virtualClock === true) env.DEVHOST_VIRTUAL_CLOCK = 'true';
  if (options.keys?.admin !== undefined) env.FUNCTIONS_ADMIN_KEY = options.keys.admin;
  if (options.keys?.function !== undefined) env.FUNCTIONS_KEY = options.keys.function;
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const host = new ChildDevhost(env, appRoot, options.keys ?? {}, taskHub, options.verbose === true, options.startTimeoutMs ?? 30_000);
  await host.start();
  running.add(host);
  return host;
}
