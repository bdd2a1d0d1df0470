/**
 * Global setup of the `e2e-real` jest project (jest runs it only when that project takes part): a
 * private copy of the host build with keys made up for this run, the app's extensions built from
 * extensions.csproj (cached across runs), and an Azurite of its own. Workers are forked afterwards and
 * find them through the environment (`realHostEnvironment`); every e2e file then starts hosts of its
 * own from them.
 *
 * Why a second Azurite: Azurite answers on one event loop, and the two hosts' suites run side by side
 * (two workers). A real-host file registering a thousand gate runs kept the run's one Azurite busy
 * enough that a devhost file's calls waited for seconds; with one each, neither queues behind the other.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { startAzurite } from '../../devhost/azurite';
import { buildExtensions } from '../../devhost/realHost/extensions';
import { copyHostBuild, type HostBuild, type RealHostKeys } from '../../devhost/realHost/hostBuild';
import { optionalTool } from './optionalTool';
import { hostClaimsVariable, runAccounts, spareAccountsVariable, startRunStorage, stopRunStorage } from './storageAccounts';
import { realHostTool } from './realHostTool.cjs';

const repoRoot = resolve(__dirname, '..', '..');
const variable = 'TEST_REAL_HOST';

interface Prepared {
  readonly dir: string;
  readonly keys: RealHostKeys;
  readonly extensionsBin: string;
  readonly scratch: string;
  /** The real-host projects' Azurite (absent when TEST_REAL_HOST was given from outside). */
  readonly storage?: string;
  /** The claims on its host accounts (storageAccounts.ts). */
  readonly hostClaims?: string;
}

declare global {
  var __REAL_HOST_SCRATCH__: string | undefined;
  var __REAL_HOST_AZURITE_STOP__: (() => Promise<void>) | undefined;
}

export default async function realHostSetup(): Promise<void> {
  const given = process.env[variable];
  // Prepared outside without storage of its own: the files run on the run's Azurite (useRealHostStorage).
  if (given !== undefined) {
    if ((JSON.parse(given) as Prepared).storage === undefined) await startRunStorage();
    return;
  }
  const source = optionalTool(realHostTool);
  // jest.config.js leaves the project out when the host is missing, so this is a misconfiguration.
  if (source === undefined) throw new Error('The e2e-real project runs only with a real Functions host');
  const scratch = mkdtempSync(join(tmpdir(), 'tallyho-real-host-'));
  globalThis.__REAL_HOST_SCRATCH__ = scratch;
  const build = copyHostBuild(source, { parent: scratch });
  const cacheDir = join(repoRoot, 'node_modules', '.cache', 'functions-extensions');
  mkdirSync(cacheDir, { recursive: true });
  const extensionsBin = await buildExtensions({ project: join(repoRoot, 'extensions.csproj'), cacheDir });
  const azurite = await startAzurite({ accounts: runAccounts });
  globalThis.__REAL_HOST_AZURITE_STOP__ = () => azurite.stop();
  const hostClaims = join(scratch, 'host-accounts');
  mkdirSync(hostClaims);
  const prepared: Prepared = { dir: build.dir, keys: build.keys, extensionsBin, scratch, storage: azurite.connectionString, hostClaims };
  process.env[variable] = JSON.stringify(prepared);
}

/** Global teardown of the project: its Azurite stops, the host copy and every app copy go. */
export async function removeRealHostScratch(): Promise<void> {
  await globalThis.__REAL_HOST_AZURITE_STOP__?.();
  await stopRunStorage();
  const scratch = globalThis.__REAL_HOST_SCRATCH__;
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
}

/**
 * In a worker of a real-host project: points the file's storage (the hosts it starts and its own
 * reads) at the projects' Azurite.
 */
export function useRealHostStorage(): void {
  const text = process.env[variable];
  if (text === undefined) return;
  const { storage, hostClaims } = JSON.parse(text) as Prepared;
  // On the devhost projects' Azurite, whose spare accounts the devhost runs of the same files take
  // (its host accounts are claimed, so both projects' hosts share them safely).
  if (storage === undefined) {
    delete process.env[spareAccountsVariable];
    return;
  }
  process.env.TEST_STORAGE_CONNECTION = storage;
  process.env.AzureWebJobsStorage = storage;
  process.env[spareAccountsVariable] = 'true';
  if (hostClaims === undefined) delete process.env[hostClaimsVariable];
  else process.env[hostClaimsVariable] = hostClaims;
}

/** In a worker: the host build, the built extensions and a scratch folder for app copies. */
export function realHostEnvironment(): { build: HostBuild; extensionsBin: string; scratch: string } {
  const text = process.env[variable];
  if (text === undefined) throw new Error(`${variable} is not set: the e2e-real project's global setup prepares the real host`);
  const prepared = JSON.parse(text) as Prepared;
  return { build: { dir: prepared.dir, keys: prepared.keys }, extensionsBin: prepared.extensionsBin, scratch: prepared.scratch };
}
