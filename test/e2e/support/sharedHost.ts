/**
 * One host per project, shared by the test files that need only isolation, not an app of their own
 * (BullMQ's idea: one queue name per test instead of one Redis per test). Such a file takes
 * `sharedE2eHost()` and names everything it makes with `unique(…)`; it never restarts the host,
 * gives it settings of its own, reads its output or counts what the whole app holds. That is also
 * exactly what a test must do to run against a deployment (E2E_BASE_URL): there, the shared host is
 * the external one. A file that needs a fresh app, settings or a restart starts its own host
 * (`startE2eHost`), and is skipped against a deployment (`ownHostTest`).
 *
 * The e2e projects' global setup (test/support/e2eSetup.ts, realHostSetup.ts) readies the shared host
 * in jest's main process, which starts it, with keys on and the app's sample settings, once the
 * first file asks for it (`sharedE2eHost()` leaves a file saying so), and writes where it listens to
 * a file once it does; `sharedE2eHost()` waits for that file. A run whose files use no shared host
 * (one file, a project without them) starts none; in a whole CI run the first file to use it began
 * some 350 s into jest's 870 s on the real host and 610 s on the devhost (2 × Intel Xeon,
 * 2026-12-01), and an idle real host costs some 40–50 ms of CPU a second with its Azurite. Its
 * output goes to a file too (`output()` reads it, for reports only), and the global teardown stops it.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { until } from '../../support/waits';
import {
  type E2eHost,
  type E2eHostOptions,
  externalE2eHost,
  externalHost,
  hostKind,
  type HostKeys,
  registerRunning,
  startHostOn,
} from './harness';

/** The folder where the shared hosts say where they listen (set by the global setup, inherited by workers). */
const variable = 'TEST_SHARED_HOSTS';

type Kind = 'devhost' | 'real';

type Info =
  | { readonly kind: Kind; readonly baseUrl: string; readonly keys: HostKeys; readonly taskHub: string; readonly storage: string }
  | { readonly kind: Kind; readonly error: string };

const infoFile = (dir: string, kind: Kind): string => join(dir, `${kind}.json`);
const logFile = (dir: string, kind: Kind): string => join(dir, `${kind}.log`);

/** Left by the first file that asks for the shared host of this kind: the main process then starts it. */
const wantedFile = (dir: string, kind: Kind): string => join(dir, `${kind}.wanted`);

/** A shared host in the main process: waiting to be asked for (`watch`), then starting or started. */
interface Launched {
  readonly watch: NodeJS.Timeout;
  started?: Promise<E2eHost | undefined>;
}

declare global {
  var __SHARED_HOSTS__: Map<Kind, Launched> | undefined;
}

/**
 * Global setup: readies the shared host of this kind (once per run), to start when a file first asks
 * for it. Workers, forked after the global setup, ask and find it through TEST_SHARED_HOSTS.
 */
export function launchSharedHost(kind: Kind, dirFor: () => string, options: E2eHostOptions = {}): void {
  if (externalHost) return;
  const hosts = (globalThis.__SHARED_HOSTS__ ??= new Map());
  if (hosts.has(kind)) return;
  const dir = (process.env[variable] ??= dirFor());
  mkdirSync(dir, { recursive: true });
  writeFileSync(logFile(dir, kind), '');
  // A look for the file every 200 ms in jest's main process: a stat, next to nothing.
  const launched: Launched = {
    watch: setInterval(() => {
      if (!existsSync(wantedFile(dir, kind))) return;
      clearInterval(launched.watch);
      launched.started = start(kind, dir, options);
    }, 200).unref(),
  };
  hosts.set(kind, launched);
}

function start(kind: Kind, dir: string, options: E2eHostOptions): Promise<E2eHost | undefined> {
  return startHostOn(kind, { ...options, onOutput: (text) => appendFileSync(logFile(dir, kind), text) }).then(
    (host) => {
      const info: Info = { kind, baseUrl: host.baseUrl, keys: host.keys, taskHub: host.taskHub ?? '', storage: host.storage ?? '' };
      writeFileSync(infoFile(dir, kind), JSON.stringify(info));
      return host;
    },
    (err: unknown) => {
      writeFileSync(infoFile(dir, kind), JSON.stringify({ kind, error: err instanceof Error ? err.message : String(err) }));
      return undefined;
    },
  );
}

/** Global teardown: ends the shared hosts this process started (their output goes to E2E_HOST_LOG_DIR); one never asked for never starts. */
export async function stopSharedHosts(): Promise<void> {
  const hosts = globalThis.__SHARED_HOSTS__;
  if (hosts === undefined) return;
  globalThis.__SHARED_HOSTS__ = undefined;
  for (const launched of hosts.values()) clearInterval(launched.watch);
  await Promise.all([...hosts.values()].map(async (launched) => (await launched.started)?.dispose()));
}

/** A shared host as a test file sees it: no restart, no settings of its own, nothing to stop. */
class SharedE2eHost implements E2eHost {
  readonly external = false;
  readonly kind: Kind;
  readonly baseUrl: string;
  readonly keys: HostKeys;
  readonly taskHub: string;
  readonly storage: string;

  constructor(
    info: Extract<Info, { baseUrl: string }>,
    private readonly log: string,
  ) {
    this.kind = info.kind;
    this.baseUrl = info.baseUrl;
    this.keys = info.keys;
    this.taskHub = info.taskHub;
    this.storage = info.storage;
  }

  url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  /** Everything the shared host printed, for every file using it: for reports, never for assertions. */
  output(): string {
    return existsSync(this.log) ? readFileSync(this.log, 'utf8') : '';
  }

  restart(): Promise<void> {
    return Promise.reject(new Error('restart() needs a host of the file’s own (startE2eHost); this one is shared'));
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }

  dispose(): Promise<void> {
    return Promise.resolve();
  }

  advanceClock(): Promise<never> {
    return Promise.reject(new Error('The shared host has no virtual clock (start a host of the file’s own with virtualClock)'));
  }

  pass(ms: number): Promise<void> {
    return new Promise((r) => setTimeout(r, ms));
  }
}

/**
 * The host this project's files share (the external one with E2E_BASE_URL). Asks the main process
 * for it and waits until it listens; fails when its start failed.
 */
export async function sharedE2eHost(): Promise<E2eHost> {
  if (externalHost) return externalE2eHost();
  const kind: Kind = hostKind() === 'real' ? 'real' : 'devhost';
  const dir = process.env[variable];
  if (dir === undefined) throw new Error(`${variable} is not set: the e2e projects' global setup starts the shared host (jest.config.js)`);
  // The main process starts the host on the first of these; every later one finds it there.
  writeFileSync(wantedFile(dir, kind), '');
  const info = await until(
    `the shared ${kind} to listen`,
    () => (existsSync(infoFile(dir, kind)) ? (JSON.parse(readFileSync(infoFile(dir, kind), 'utf8')) as Info) : undefined),
    { everyMs: 200, report: () => `Its output so far:\n${readFileSync(logFile(dir, kind), 'utf8').slice(-4000)}` },
  );
  if ('error' in info) throw new Error(`The shared ${kind} did not start: ${info.error}`);
  const host = new SharedE2eHost(info, logFile(dir, kind));
  registerRunning(host);
  return host;
}
