/**
 * `npm start`: Azurite (in memory; `--persist` keeps data in `.azurite/`), `local.settings.json`
 * (copied from `local.settings.sample.json` when missing), then `func start` when Azure Functions
 * Core Tools are on PATH, else the real Functions host when FUNCTIONS_HOST_BUILD names a build of it
 * and the .NET SDK is installed (realHost/serve.ts), otherwise the offline devhost. One Ctrl+C (or
 * SIGTERM) stops both.
 *
 * PORT sets the HTTP port (else local.settings.json Host.LocalHttpPort, else 7071); AZURITE_BLOB_PORT / AZURITE_QUEUE_PORT /
 * AZURITE_TABLE_PORT move Azurite (defaults 10000-10002) and AzureWebJobsStorage follows them while
 * it is unset or `UseDevelopmentStorage=true`; FUNCTIONS_ADMIN_KEY / FUNCTIONS_KEY turn on key
 * enforcement on function routes (devhost only: `func start` never enforces them). The admin API
 * always needs the master key (FUNCTIONS_ADMIN_KEY, or one made up and printed at start).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { getSetting, readLocalSettings } from './app/settings';
import { type AzuritePorts, connectionStringFor, type RunningAzurite, startAzurite, whoListens } from './azurite';
import { defaultExtensions } from './extensions';
import { startHost } from './host';
import { configuredHostBuild } from './realHost/hostBuild';
import { serveOnRealHost } from './realHost/serve';

// `--app DIR`, else the working directory (npm runs scripts in the package's folder), as cli.ts does.
const { values: options } = parseArgs({
  options: { app: { type: 'string' }, persist: { type: 'boolean', default: false } },
});
const appRoot = resolve(options.app ?? process.cwd());

function port(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0 || n > 65535) throw new Error(`${name} must be a port number (got ${text})`);
  return n;
}

function say(message: string): void {
  console.log(`[start] ${message}`);
}

function ensureLocalSettings(): void {
  const target = join(appRoot, 'local.settings.json');
  if (existsSync(target)) return;
  const sample = join(appRoot, 'local.settings.sample.json');
  if (!existsSync(sample)) return;
  copyFileSync(sample, target);
  say('Created local.settings.json from local.settings.sample.json (edit it to change settings).');
}

function onPath(command: string): boolean {
  const probe = spawnSync(process.platform === 'win32' ? 'where' : 'which', [command], { stdio: 'ignore' });
  return probe.status === 0;
}

/** The Azurite `npm start` uses and stops; an Azurite already on the ports is reused and left running. */
interface StartAzurite {
  readonly connectionString: string;
  stop(): Promise<void>;
}

const movePorts = 'set AZURITE_BLOB_PORT, AZURITE_QUEUE_PORT and AZURITE_TABLE_PORT to free ports';

async function azuriteFor(ports: AzuritePorts, location: string | undefined): Promise<StartAzurite> {
  const host = '127.0.0.1';
  const named = `blob ${ports.blob}, queue ${ports.queue}, table ${ports.table}`;
  const holders = await Promise.all([ports.blob, ports.queue, ports.table].map((p) => whoListens(host, p)));
  if (holders.every((h) => h === 'azurite')) {
    // Its data is whatever it holds, so the run does not start empty: say so rather than "in memory".
    say(
      `Reusing the Azurite already running on ${named} (its data, not a fresh in-memory store; it keeps running after this stops). For a fresh one, stop it or ${movePorts}.`,
    );
    if (location !== undefined) say('--persist does not apply to an Azurite this did not start.');
    return { connectionString: connectionStringFor(host, ports), stop: () => Promise.resolve() };
  }
  if (holders.some((h) => h !== 'free')) {
    const taken = [ports.blob, ports.queue, ports.table].filter((_, i) => holders[i] !== 'free');
    throw new Error(
      `Port${taken.length > 1 ? 's' : ''} ${taken.join(', ')} already in use (Azurite needs ${named}), not all by an Azurite: stop what listens there, or ${movePorts}.`,
    );
  }
  let azurite: RunningAzurite;
  try {
    azurite = await startAzurite({ ports, host, detached: true, ...(location === undefined ? {} : { location }) });
  } catch (err) {
    throw new Error(`Azurite could not start on ${named} (${err instanceof Error ? err.message : String(err)}): ${movePorts}.`);
  }
  say(`Azurite on ${named} (${location === undefined ? 'in memory' : `data in ${location}`})`);
  return azurite;
}

async function main(): Promise<void> {
  ensureLocalSettings();
  const local = readLocalSettings(appRoot);
  // The host's own order: PORT, then local.settings.json Host.LocalHttpPort, then 7071.
  const httpPort = port('PORT', local.localHttpPort ?? 7071);

  const ports = {
    blob: port('AZURITE_BLOB_PORT', 10000),
    queue: port('AZURITE_QUEUE_PORT', 10001),
    table: port('AZURITE_TABLE_PORT', 10002),
  };
  const location = options.persist === true ? join(appRoot, '.azurite') : undefined;
  const azurite = await azuriteFor(ports, location);

  // Storage settings follow Azurite's ports unless the developer points them elsewhere.
  const storage = process.env.AzureWebJobsStorage ?? getSetting(local.values, 'AzureWebJobsStorage');
  if (storage === undefined || /^\s*UseDevelopmentStorage=true\s*;?\s*$/i.test(storage))
    process.env.AzureWebJobsStorage = azurite.connectionString;

  // Signals are handled from here on, so Ctrl+C during start-up still stops Azurite.
  let stopApp: () => Promise<void> = () => Promise.resolve();
  let stopping = false;
  const shutdown = (reason: string): void => {
    if (stopping) {
      if (reason !== 'func exited') process.exit(1);
      return;
    }
    stopping = true;
    say(`${reason}: stopping`);
    stopApp()
      .catch((err: unknown) => console.error(err))
      .then(() => azurite.stop())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  const hostBuild = configuredHostBuild();
  if (onPath('func')) {
    say(`Azure Functions Core Tools found: running func start on port ${httpPort}`);
    say(keysOff('func start never checks them'));
    const func: ChildProcess = spawn('func', ['start', '--port', String(httpPort)], { cwd: appRoot, stdio: 'inherit', env: process.env });
    const exited = new Promise<void>((r) => func.once('exit', () => r()));
    stopApp = async () => {
      if (func.exitCode === null) func.kill('SIGINT');
      await exited;
    };
    void exited.then(() => shutdown('func exited'));
  } else if (hostBuild !== undefined && onPath('dotnet')) {
    say(`FUNCTIONS_HOST_BUILD names a Functions host build (${hostBuild}): running the real host on port ${httpPort}`);
    try {
      const host = await serveOnRealHost({ appRoot, hostBuild, port: httpPort, settings: local.values, say });
      stopApp = () => host.stop();
    } catch (err) {
      await azurite.stop();
      throw err;
    }
  } else {
    say('Azure Functions Core Tools (func) are not installed: using the offline devhost (see devhost/README.md for how it differs).');
    process.chdir(appRoot);
    try {
      const host = await startHost({ appRoot, port: httpPort, extensions: defaultExtensions() });
      stopApp = () => host.stop();
      // The admin API always needs the master key; one made up for this run is shown so it can be used.
      if (host.masterKeyGenerated) say(`Master key for /admin: ${host.masterKey} (set FUNCTIONS_ADMIN_KEY to choose it)`);
      say(
        host.keysEnforced
          ? 'Function keys are on: function-level routes want FUNCTIONS_KEY or the admin key'
          : keysOff('FUNCTIONS_KEY and FUNCTIONS_ADMIN_KEY are unset'),
      );
    } catch (err) {
      await azurite.stop();
      throw err;
    }
  }
}

/** Said at start whenever function-level routes answer without a key, so nobody mistakes this for a deployment's security. */
function keysOff(why: string): string {
  return `Function keys are OFF (${why}): function-level routes answer any caller. Set FUNCTIONS_KEY / FUNCTIONS_ADMIN_KEY to turn them on.`;
}

main().catch((err: unknown) => {
  console.error(`[start] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
