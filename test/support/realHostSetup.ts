/**
 * Global setup of the `e2e-real` jest project (jest runs it only when that project takes part): a
 * private copy of the host build with keys made up for this run, the app's extensions built from
 * extensions.csproj (cached across runs), both precompiled (ReadyToRun, cached per machine), an
 * Azurite of its own and the real host the files share (test/e2e/support/sharedHost.ts, started in
 * the background). Workers are forked afterwards and find them through the environment
 * (`realHostEnvironment`); a file that needs a host of its own starts it from them.
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
import { copyHostBuild } from '../../devhost/realHost/hostBuild';
import { precompileHost } from '../../devhost/realHost/readyToRun';
import { optionalTool } from './optionalTool';
import { launchSharedHost, stopSharedHosts } from '../e2e/support/sharedHost';
import { claimHostStorage, runAccounts, startRunStorage, stopRunStorage } from './storageAccounts';
import { type Prepared, realHostVariable as variable } from './realHostPrepared';
import { realHostTool } from './realHostTool.cjs';

const repoRoot = resolve(__dirname, '..', '..');

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
  const built = await buildExtensions({ project: join(repoRoot, 'extensions.csproj'), cacheDir });
  // Each of the run's ~60 real host starts then runs precompiled code instead of JIT-compiling the
  // host at full optimisation (devhost/realHost/readyToRun.ts).
  const extensionsBin = await precompileHost(build, built, scratch, (line) => process.stdout.write(`${line}\n`));
  const azurite = await startAzurite({ accounts: runAccounts });
  globalThis.__REAL_HOST_AZURITE_STOP__ = () => azurite.stop();
  const hostClaims = join(scratch, 'host-accounts');
  mkdirSync(hostClaims);
  const prepared: Prepared = { dir: build.dir, keys: build.keys, extensionsBin, scratch, storage: azurite.connectionString, hostClaims };
  process.env[variable] = JSON.stringify(prepared);
  // The real host the projects' files share (test/e2e/support/sharedHost.ts), on an account of this Azurite.
  launchSharedHost('real', () => join(scratch, 'shared-hosts'), { storage: claimHostStorage(azurite.connectionString, hostClaims) });
}

/** Global teardown of the project: its Azurite stops, the host copy and every app copy go. */
export async function removeRealHostScratch(): Promise<void> {
  await stopSharedHosts();
  await globalThis.__REAL_HOST_AZURITE_STOP__?.();
  await stopRunStorage();
  const scratch = globalThis.__REAL_HOST_SCRATCH__;
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
}
