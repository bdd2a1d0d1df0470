/**
 * End-to-end hosts for HTTP-only tests. Each e2e file runs twice when the real Functions host is
 * available: in the `e2e` jest project on the devhost, and in the `e2e-real` project on the real host
 * (test/support/realHostTool.cjs says how one is found; the project's setup builds what it needs).
 * `startE2eHost()` starts the host of the current project as a child process on a free port, against
 * a storage account of its own in the test Azurite (`host.storage`; test/support/storageAccounts.ts),
 * with the app's sample settings, a task hub of its own,
 * keys on (a function key and the master/admin key) and the options given. With `E2E_BASE_URL` set,
 * it targets that host instead (e.g. `func start`); keys then come from `E2E_FUNCTION_KEY` /
 * `E2E_ADMIN_KEY`.
 *
 * Tests that need a devhost-only feature (the virtual clock) use `devhostTest` / `describeDevhost`,
 * so the real-host run lists them as skipped with the reason in their name.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join, relative, resolve } from 'node:path';

import { copyApp } from '../../../devhost/realHost/appCopy';
import { processCpuMs } from '../../../devhost/realHost/cpu';
import type { HostBuild } from '../../../devhost/realHost/hostBuild';
import { type RealHost, startRealHost } from '../../../devhost/realHost/process';
import { deployed } from '../../support/deployment';
import { realHostEnvironment } from '../../support/realHostPrepared';
import { claimHostStorage, runStorage } from '../../support/storageAccounts';
import { counted } from '../../support/hostCosts';
import { waitingFor } from '../../support/waits';
import { provisionJobQueues } from '../../support/provision';

export const repoRoot = resolve(__dirname, '..', '..', '..');
const cliPath = join(repoRoot, 'dist', 'devhost', 'cli.js');

export interface HostKeys {
  /** The master key: admin-level routes, the host's admin API, the Durable HTTP API. */
  readonly admin?: string;
  readonly function?: string;
}

export type HostKind = 'devhost' | 'real' | 'external';

export interface E2eHostOptions {
  /** Settings for the app and host (win over everything else). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Devhost only: start with `DEVHOST_VIRTUAL_CLOCK=true` (move time with `advanceClock`). `'where
   * available'` asks for it on the devhost and runs on real time elsewhere (the test uses `pass`).
   */
  readonly virtualClock?: boolean | 'where available';
  /** The app to run (default: this repository). */
  readonly appRoot?: string;
  /** The durable task hub; default: a fresh one per start (so tests never share orchestration state). */
  readonly taskHub?: string;
  /**
   * The storage to run on: another host's (`host.storage`), for a test of work one host leaves in
   * storage for the next. Default: a storage account of its own, as each app has in Azure.
   */
  readonly storage?: string | undefined;
  /** Pass the host's own output through (default: kept for `output()` and shown on failure). */
  readonly verbose?: boolean;
  /** Called with each piece of the host's output as it comes (the shared hosts keep theirs in a file). */
  readonly onOutput?: (text: string) => void;
  /**
   * Ignored, kept so older callers compile: a start waits for the host to listen (or to exit) however
   * long that takes, with jest's timeout as the only limit (test/support/waits.ts).
   */
  readonly startTimeoutMs?: number;
}

export interface RestartOptions {
  /** End the host with SIGKILL (no shutdown hooks, no draining) instead of SIGTERM. */
  readonly kill?: boolean;
  /**
   * Devhost with a virtual clock only: the clock starts at this time (epoch ms) instead of now, so a
   * test can have the host come back "later" (timers that came due while it was down) without sleeping.
   */
  readonly clockStartsAt?: number;
}

export interface E2eHost {
  readonly kind: HostKind;
  readonly baseUrl: string;
  /** True when `E2E_BASE_URL` points at a host this harness did not start. */
  readonly external: boolean;
  readonly keys: HostKeys;
  /** The task hub this host uses (undefined for an external host). */
  readonly taskHub: string | undefined;
  /** The connection string of the storage this host uses, for a test's own look at it (undefined for an external host). */
  readonly storage: string | undefined;
  url(path: string): string;
  /** Everything the host printed so far. */
  output(): string;
  /**
   * Stops and starts the host again on the same port, storage and task hub. By default the stop is
   * graceful (SIGTERM: the host drains and runs its shutdown hooks); `{ kill: true }` sends SIGKILL
   * instead, as a crash would, so nothing the host had not yet made durable survives.
   */
  restart(options?: RestartOptions): Promise<void>;
  /** Stops the host gracefully (SIGTERM: it drains and runs its shutdown hooks), for a test that observes a stop. */
  stop(): Promise<void>;
  /**
   * The file is done with the host: it ends at once (SIGKILL, as a crash would). Nothing reads what a
   * drain would still make durable, as no later host uses its storage account (claimHostStorage), so
   * a graceful stop here only cost time: 2–3 s a real host (the timing reporter's "stop" lines).
   */
  dispose(): Promise<void>;
  /**
   * Devhost only: moves the virtual clock forward by `ms` (or to an ISO time) and waits until the
   * host has settled, however long that takes (`timeoutMs` is ignored, kept so older callers
   * compile). An advance still running when its test ends is reported with the host's last output,
   * where the devhost names what keeps a slow step busy.
   */
  advanceClock(by: number | { to: string }, timeoutMs?: number): Promise<{ now: string; steps: number }>;
  /**
   * Lets `ms` of the host's time pass: moves the virtual clock of a devhost started with one, else
   * waits that long in real time. For tests that run on every host and need timers to come due.
   */
  pass(ms: number): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** True when the suite runs against an external host (E2E_BASE_URL). */
export const externalHost = process.env.E2E_BASE_URL !== undefined && process.env.E2E_BASE_URL !== '';

/** The host this jest project runs its e2e files on (its setup file sets E2E_HOST). */
export function hostKind(): HostKind {
  if (externalHost) return 'external';
  return process.env.E2E_HOST === 'real' ? 'real' : 'devhost';
}

/**
 * The size of an at-scale case: `full` on the real host (and an external one), `onDevhost` on the
 * devhost, which runs the same code paths and assertions; the at-scale proof is the real host's, and
 * the devhost run keeps the suite's time down (#25).
 */
export const atScale = (full: number, onDevhost: number): number => (hostKind() === 'devhost' ? onDevhost : full);

/** A name for the host kind, for test and describe titles. */
export const hostLabel = (): string => ({ devhost: 'devhost', real: 'real host', external: 'external host' })[hostKind()];

/** Why a devhost-only test is skipped here: the other hosts lack `feature`. */
const skipNote = (feature: string): string =>
  `[skipped: needs the devhost's ${feature}; ${hostKind() === 'external' ? 'E2E_BASE_URL is set' : 'this run is on the real host'}]`;

/**
 * `test` for tests that need a devhost-only feature (default: its virtual clock); skipped on other
 * hosts, with the feature in the name.
 */
export const devhostTest = (name: string, fn: () => Promise<void>, timeout?: number, feature = 'virtual clock'): void => {
  if (hostKind() !== 'devhost') test.skip(`${name} ${skipNote(feature)}`, fn);
  else test(name, fn, timeout);
};

/** `describe` for a block that needs a devhost-only feature (default: its virtual clock); skipped elsewhere. */
export const describeDevhost = (name: string, fn: () => void, feature = 'virtual clock'): void => {
  if (hostKind() !== 'devhost') describe.skip(`${name} ${skipNote(feature)}`, fn);
  else describe(name, fn);
};

/**
 * `test` for what only the real Functions host has (`feature`: its Durable Task Framework, say);
 * skipped on the devhost and against E2E_BASE_URL (whose output this harness cannot read), named so.
 */
export const realHostTest = (name: string, fn: () => Promise<void>, feature: string, timeout?: number): void => {
  if (hostKind() !== 'real') test.skip(`${name} [skipped: needs the real host's ${feature}; this run is on the ${hostLabel()}]`, fn);
  else test(name, fn, timeout);
};

const ownHostNote = '[skipped: needs a host of its own; E2E_BASE_URL is set]';

/**
 * `test` for tests that a host this harness did not start cannot run: a fresh app, settings of their
 * own, a restart, the host's output or its storage. Against E2E_BASE_URL they are skipped, named so.
 */
export const ownHostTest = (name: string, fn: () => Promise<void>, timeout?: number): void => {
  if (externalHost) test.skip(`${name} ${ownHostNote}`, fn);
  else test(name, fn, timeout);
};

/** `describe` for a block whose every test needs a host of its own (see ownHostTest); skipped against E2E_BASE_URL. */
export const describeOwnHost = (name: string, fn: () => void): void => {
  if (externalHost) describe.skip(`${name} ${ownHostNote}`, fn);
  else describe(name, fn);
};

const running = new Set<E2eHost>();

/** With E2E_HOST_LOG_DIR set, every host's output is kept there when it stops, for a look afterwards. */
function keepOutput(host: E2eHost): void {
  const dir = process.env.E2E_HOST_LOG_DIR;
  if (dir === undefined || dir === '') return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${host.kind}-${host.taskHub ?? 'external'}.log`), host.output());
}

/**
 * The storage a host uses, for a test's own look at it. An external host's storage is not this run's:
 * a test that reads it needs a host of its own (ownHostTest, describeOwnHost).
 */
export function storageOf(host: E2eHost): string {
  if (host.storage !== undefined) return host.storage;
  if (host.external)
    throw new Error("This test reads the host's storage, which an external host (E2E_BASE_URL) does not share: make it an ownHostTest");
  return runStorage();
}

/** Counts a host this file did not start (the shared one) among its hosts, for failure reports. */
export function registerRunning(host: E2eHost): void {
  running.add(host);
}

/** The hosts this test file started and has not stopped (or the external host), for failure reports. */
export function runningHosts(): readonly E2eHost[] {
  return externalHost ? [externalE2eHost()] : [...running];
}

function uniqueTaskHub(): string {
  return `e2e${randomBytes(6).toString('hex')}`;
}

const newKey = (): string => randomBytes(24).toString('base64url');

/** The app's documented defaults (local.settings.sample.json), so runs do not depend on a developer's local.settings.json. */
function sampleSettings(appRoot: string): Record<string, string> {
  const file = join(appRoot, 'local.settings.sample.json');
  if (!existsSync(file)) return {};
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { Values?: Record<string, unknown> };
  return Object.fromEntries(Object.entries(parsed.Values ?? {}).map(([k, v]) => [k, String(v)]));
}

/** The storage of a new host: the one asked for (or set as AzureWebJobsStorage), else an account claimed for it. */
function storageFor(options: E2eHostOptions): string {
  return options.storage ?? options.env?.AzureWebJobsStorage ?? claimHostStorage();
}

/** The app's settings for one host: the samples, its storage, the task hub, then the test's own. */
/**
 * Storage attempts of the harness's hosts get two minutes, not the app's 10 s: one Azurite serves every
 * host of the run, and on a busy machine an attempt can take longer than 10 s (beside a soak, three
 * aborted attempts in a row answered 503 and failed tests that assert a 201). A test that is about
 * slow or failing storage says so with settings of its own (test/fault, test/integration/health.test.ts)
 * or a fault proxy; every other test is about what the app answers, however long storage takes.
 */
const patientStorage = { TALLYHO_STORAGE_TRY_TIMEOUT_MS: '120000' } as const;

function appSettings(appRoot: string, storage: string, taskHub: string, overrides: E2eHostOptions['env']): Record<string, string> {
  const settings: Record<string, string> = {
    ...sampleSettings(appRoot),
    ...patientStorage,
    AzureWebJobsStorage: storage,
    AzureFunctionsJobHost__extensions__durableTask__hubName: taskHub,
    TALLYHO_TASK_HUB: taskHub,
  };
  for (const [k, v] of Object.entries(overrides ?? {})) {
    if (v === undefined) delete settings[k];
    else settings[k] = v;
  }
  return settings;
}

/** The host E2E_BASE_URL names, with the keys E2E_FUNCTION_KEY / E2E_ADMIN_KEY give. */
export function externalE2eHost(): E2eHost {
  const baseUrl = (process.env.E2E_BASE_URL as string).replace(/\/+$/, '');
  const keys: HostKeys = {
    ...(process.env.E2E_ADMIN_KEY ? { admin: process.env.E2E_ADMIN_KEY } : {}),
    ...(process.env.E2E_FUNCTION_KEY ? { function: process.env.E2E_FUNCTION_KEY } : {}),
  };
  const unsupported = (what: string) => (): never => {
    throw new Error(`${what} needs a host of the harness's own; E2E_BASE_URL is set`);
  };
  return {
    kind: 'external',
    baseUrl,
    external: true,
    keys,
    taskHub: undefined,
    storage: undefined,
    url: (path) => `${baseUrl}${path}`,
    output: () => '',
    restart: unsupported('restart()'),
    stop: () => Promise.resolve(),
    dispose: () => Promise.resolve(),
    advanceClock: unsupported('advanceClock()'),
    pass: sleep,
  };
}

class ChildDevhost implements E2eHost {
  readonly kind = 'devhost';
  readonly external = false;
  baseUrl = '';
  private child: ChildProcess | undefined;
  private log = '';
  private port = 0;

  keys: HostKeys;

  constructor(
    private readonly env: Record<string, string>,
    private readonly appRoot: string,
    /** The keys configured; without an admin key the devhost makes up a master key at each start. */
    private readonly configuredKeys: HostKeys,
    readonly taskHub: string,
    readonly storage: string,
    private readonly verbose: boolean,
    private readonly onOutput: ((text: string) => void) | undefined,
  ) {
    this.keys = configuredKeys;
  }

  url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  output(): string {
    return this.log;
  }

  /** `endedMs`: for a restart, the CPU the process it replaces had used (counted as that life's). */
  start(endedMs = 0): Promise<void> {
    return counted('devhost', this.port === 0 ? 'start' : 'restart', () => this.spawnAndListen(), {
      ended: () => endedMs,
      started: () => this.cpuMs(),
    });
  }

  /** CPU time (ms) the devhost process has used since this start (NaN when it is not running, or without /proc). */
  private cpuMs(): number {
    return processCpuMs(this.child?.pid);
  }

  private async spawnAndListen(): Promise<void> {
    if (!existsSync(cliPath)) throw new Error(`${cliPath} does not exist: run \`npm run build\` before the e2e tests`);
    const child = spawn(process.execPath, [cliPath, '--app', this.appRoot, '--port', String(this.port), '--quiet'], {
      cwd: this.appRoot,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const from = this.log.length;
    // Listening is a line the devhost prints (with the master key it made up, when none was given);
    // exiting first is a failed start. No time budget: a busy machine only makes it later.
    const listening = (signal: AbortSignal): Promise<string> =>
      new Promise<string>((resolveUrl, reject) => {
        const onData = (chunk: Buffer): void => {
          const text = chunk.toString();
          this.log += text;
          this.onOutput?.(text);
          if (this.verbose) process.stdout.write(text);
          const m = /devhost listening on (\S+)/.exec(this.log.slice(from));
          const master = /devhost master key: (\S+)/.exec(this.log.slice(from));
          // Without a configured admin key the devhost prints the master key it made up, after the URL.
          if (master !== null) this.keys = { ...this.configuredKeys, admin: master[1] };
          if (m !== null && (master !== null || this.configuredKeys.admin !== undefined)) resolveUrl(m[1] as string);
        };
        child.stdout?.on('data', onData);
        child.stderr?.on('data', onData);
        void exited.then((code) => reject(new Error(`devhost exited with code ${code} before listening:\n${this.log}`)));
        signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      });
    try {
      this.baseUrl = await waitingFor('the devhost to listen', listening, () => `The devhost's output so far:\n${this.log.slice(-4000)}`);
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    }
    this.port = Number(new URL(this.baseUrl).port);
  }

  stop(): Promise<void> {
    // A host that does not stop within a minute of SIGTERM is killed.
    return this.finish(() => this.end('SIGTERM', 60_000));
  }

  dispose(): Promise<void> {
    return this.finish(() => this.end('SIGKILL'));
  }

  private async finish(ending: () => Promise<void>): Promise<void> {
    running.delete(this);
    await counted('devhost', 'stop', ending, { ended: () => this.cpuMs() });
    keepOutput(this);
  }

  /**
   * Sends `signal` and waits for the exit; with `killAfterMs`, SIGKILL follows when the host is still
   * up by then. A restart's graceful stop has none: its drain is part of what a test observes.
   */
  private async end(signal: 'SIGTERM' | 'SIGKILL', killAfterMs?: number): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill(signal);
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    await waitingFor(
      `the devhost to exit (${signal})`,
      () => exited,
      () => `The devhost's last output:\n${this.log.slice(-4000)}`,
    );
    clearTimeout(timer);
  }

  async restart(options: RestartOptions = {}): Promise<void> {
    if (options.clockStartsAt !== undefined && this.env.DEVHOST_VIRTUAL_CLOCK !== 'true')
      throw new Error('restart({ clockStartsAt }) needs a host started with virtualClock: true');
    const endedMs = this.cpuMs();
    await this.end(options.kill === true ? 'SIGKILL' : 'SIGTERM');
    // For this start only: a later restart without the option starts the clock at now again.
    if (options.clockStartsAt === undefined) delete this.env.DEVHOST_VIRTUAL_CLOCK_START;
    else this.env.DEVHOST_VIRTUAL_CLOCK_START = new Date(options.clockStartsAt).toISOString();
    await this.start(endedMs);
  }

  async pass(ms: number): Promise<void> {
    if (this.env.DEVHOST_VIRTUAL_CLOCK === 'true') await this.advanceClock(ms);
    else await sleep(ms);
  }

  async advanceClock(by: number | { to: string }): Promise<{ now: string; steps: number }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.keys.admin !== undefined) headers['x-functions-key'] = this.keys.admin;
    const request = typeof by === 'number' ? { advanceMs: by } : by;
    const tail = (): string => this.log.slice(-4000);
    // node:http, not fetch: fetch gives up on an answer whose headers take five minutes, and a long
    // advance on a busy machine may; this waits until the host answers.
    const answer = await waitingFor(
      `the virtual clock to advance (${JSON.stringify(request)})`,
      (signal) => postJson(this.url('/admin/devhost/clock'), headers, request, signal),
      () => `The host's last output:\n${tail()}`,
    );
    const body = JSON.parse(answer.text) as { now: string; steps: number; detail?: string };
    if (answer.status !== 200)
      throw new Error(`Advancing the clock failed (${answer.status}): ${body.detail ?? answer.text}\nThe host's last output:\n${tail()}`);
    return body;
  }
}

/** A JSON POST over node:http, with no time limit of its own (`signal` ends it). */
function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal,
): Promise<{ status: number; text: string }> {
  return new Promise((resolveAnswer, reject) => {
    const req = httpRequest(url, { method: 'POST', headers, signal }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** The real Functions host serving a copy of the app (devhost/realHost), in the `e2e-real` project. */
class RealE2eHost implements E2eHost {
  readonly kind = 'real';
  readonly external = false;
  readonly keys: HostKeys;

  constructor(
    private readonly host: RealHost,
    private readonly appDir: string,
    readonly taskHub: string,
    readonly storage: string,
  ) {
    this.keys = { admin: host.keys.master, function: host.keys.function };
  }

  get baseUrl(): string {
    return this.host.baseUrl;
  }

  url(path: string): string {
    return `${this.host.baseUrl}${path}`;
  }

  output(): string {
    return this.host.output();
  }

  restart(options: RestartOptions = {}): Promise<void> {
    if (options.clockStartsAt !== undefined)
      throw new Error('The real host has no virtual clock (restart({ clockStartsAt }) is devhost only)');
    return counted(
      'real',
      'restart',
      () =>
        waitingFor(
          'the real host to restart',
          () => this.host.restart(options),
          () => `The host's last output:\n${this.output().slice(-4000)}`,
        ),
      { ended: () => this.host.cpuMs(), started: () => this.host.cpuMs() },
    );
  }

  stop(): Promise<void> {
    // A host still up a minute after SIGTERM is killed.
    return this.finish(() => this.host.stop(60_000));
  }

  dispose(): Promise<void> {
    return this.finish(() => this.host.kill());
  }

  private async finish(ending: () => Promise<void>): Promise<void> {
    running.delete(this);
    await counted('real', 'stop', ending, { ended: () => this.host.cpuMs() });
    keepOutput(this);
    rmSync(this.appDir, { recursive: true, force: true });
  }

  advanceClock(): Promise<never> {
    return Promise.reject(new Error('The real host has no virtual clock (use devhostTest for such tests)'));
  }

  pass(ms: number): Promise<void> {
    return sleep(ms);
  }
}

/**
 * The real host's Durable queues polled at least every second. Idle, the Durable extension backs its
 * control- and work-item-queue polling off to `maxQueuePollingInterval`, 30 s by default (Durable
 * Functions host.json reference): a test waiting on an orchestration or entity that a timer or a
 * message wakes after a quiet spell (a stream's flusher, a schedule, a gate's sweep) then waits up to
 * 30 s for the poll, not for the app. No test asserts on the interval; a test's own `env` may set it.
 * The devhost dispatches Durable work in process (devhost/durable/engine.ts): it has no queue to poll.
 */
const durablePolledPromptly = {
  AzureFunctionsJobHost__extensions__durableTask__storageProvider__maxQueuePollingInterval: '00:00:01',
} as const;

async function startReal(options: E2eHostOptions, appRoot: string, taskHub: string): Promise<E2eHost> {
  if (options.virtualClock === true) throw new Error('The real host has no virtual clock (use devhostTest / describeDevhost)');
  const { build, extensionsBin, scratch }: { build: HostBuild; extensionsBin: string; scratch: string } = realHostEnvironment();
  const appDir = copyApp({ appRoot, extensionsBin, parent: scratch, ...deployed });
  const storage = storageFor(options);
  const settings = appSettings(appRoot, storage, taskHub, { ...durablePolledPromptly, ...options.env });
  await provisionJobQueues(settings);
  let output = '';
  const host = await counted(
    'real',
    'start',
    () =>
      waitingFor(
        'the real host to report Running',
        (signal) =>
          startRealHost({
            build,
            appDir,
            settings,
            ...(options.verbose === true ? { verbose: true } : {}),
            // Until it runs or exits: no time budget (test/support/waits.ts).
            startTimeoutMs: 0,
            signal,
            onOutput: (text) => {
              output += text;
              options.onOutput?.(text);
            },
          }),
        () => `The host's output so far:\n${output.slice(-4000)}`,
      ),
    { started: (started) => started.cpuMs() },
  );
  return new RealE2eHost(host, appDir, taskHub, storage);
}

/**
 * What an external host (E2E_BASE_URL) cannot take from `options`, in one place for every caller.
 * A host of the file's own (storage, app, task hub, a virtual clock) it cannot be at all: that
 * throws, as the file's tests need a host of their own (ownHostTest / describeOwnHost skip them there
 * with the harness's notice, and jest then runs no beforeAll for them). Settings (`env`) it runs with
 * its own: the tests of the block that depend on them are ownHostTest, the others run on the
 * external host's settings, and one line on stderr names the settings not applied, so a test that
 * fails there is read against them (it was silent).
 */
function onExternalHost(options: E2eHostOptions): void {
  const ownOnly = [
    ...(['storage', 'appRoot', 'taskHub'] as const).filter((k) => options[k] !== undefined),
    ...(options.virtualClock === true ? ['virtualClock'] : []),
  ];
  if (ownOnly.length > 0)
    throw new Error(
      `startE2eHost({ ${ownOnly.join(', ')} }) needs a host of the file's own, and E2E_BASE_URL is set: make its tests ownHostTest / describeOwnHost`,
    );
  const settings = Object.keys(options.env ?? {});
  if (settings.length === 0) return;
  const testPath = typeof expect === 'undefined' ? undefined : expect.getState().testPath;
  const where = testPath === undefined ? '' : ` (${relative(repoRoot, testPath)})`;
  process.stderr.write(
    `\nNOT APPLIED${where}: E2E_BASE_URL is set, so the host runs with its own settings, not these: ${settings.join(', ')}. ` +
      `The tests that need them are ownHostTest and skipped; the others run without them.\n`,
  );
}

export async function startE2eHost(options: E2eHostOptions = {}): Promise<E2eHost> {
  if (externalHost) {
    onExternalHost(options);
    return externalE2eHost();
  }
  const host = await startHostOn(hostKind() === 'real' ? 'real' : 'devhost', options);
  running.add(host);
  return host;
}

/** A host of this kind with keys on (startE2eHost's, for a set-up that is not in a test file: the shared hosts). */
export async function startHostOn(kind: 'devhost' | 'real', options: E2eHostOptions = {}): Promise<E2eHost> {
  const appRoot = resolve(options.appRoot ?? repoRoot);
  const taskHub = options.taskHub ?? uniqueTaskHub();
  return kind === 'real'
    ? startReal(options, appRoot, taskHub)
    : startChildDevhost(options, appRoot, taskHub, { admin: newKey(), function: newKey() });
}

/**
 * Always the devhost (devhost/test uses it): keys are checked only when `keys` are given, as `func
 * start` leaves them unchecked; the admin API's master key is then one the devhost makes up.
 */
export async function startDevhost(options: E2eHostOptions & { readonly keys?: HostKeys } = {}): Promise<E2eHost> {
  const appRoot = resolve(options.appRoot ?? repoRoot);
  const host = await startChildDevhost(options, appRoot, options.taskHub ?? uniqueTaskHub(), options.keys ?? {});
  running.add(host);
  return host;
}

async function startChildDevhost(options: E2eHostOptions, appRoot: string, taskHub: string, keys: HostKeys): Promise<ChildDevhost> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  const storage = storageFor(options);
  Object.assign(env, appSettings(appRoot, storage, taskHub, {}));
  if (keys.admin !== undefined) env.FUNCTIONS_ADMIN_KEY = keys.admin;
  if (keys.function !== undefined) env.FUNCTIONS_KEY = keys.function;
  if (options.virtualClock !== undefined && options.virtualClock !== false) env.DEVHOST_VIRTUAL_CLOCK = 'true';
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  await provisionJobQueues(env);
  const host = new ChildDevhost(env, appRoot, keys, taskHub, storage, options.verbose === true, options.onOutput);
  await host.start();
  return host;
}
