/**
 * `npm start` on the real Functions host: what `func start` does, for a machine with a host build
 * (FUNCTIONS_HOST_BUILD) and the .NET SDK but no Core Tools. The app's extensions are built from its
 * `extensions.csproj` (cached under node_modules/.cache), the host serves a copy of the app, and the
 * settings of local.settings.json go to the host through the environment, which wins over them (as
 * with `func start`). The host checks keys; FUNCTIONS_KEY and FUNCTIONS_ADMIN_KEY choose them, else
 * they are made up for the run and printed.
 */
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { copyApp } from './appCopy';
import { buildExtensions } from './extensions';
import { copyHostBuild, newHostKey } from './hostBuild';
import { type RealHost, startRealHost } from './process';
import { precompileHost } from './readyToRun';

export interface ServeOptions {
  readonly appRoot: string;
  /** FUNCTIONS_HOST_BUILD: a host build folder or .tar.gz. */
  readonly hostBuild: string;
  readonly port: number;
  /** local.settings.json `Values`. */
  readonly settings: Readonly<Record<string, string>>;
  readonly say: (message: string) => void;
}

export async function serveOnRealHost(options: ServeOptions): Promise<RealHost> {
  const project = join(options.appRoot, 'extensions.csproj');
  if (!existsSync(project))
    throw new Error(`${project} is missing: the real host needs the app's extensions (see docs/local-development.md)`);
  options.say("Building the app's extensions from extensions.csproj (cached after the first time)…");
  const extensionsBin = await buildExtensions({
    project,
    cacheDir: join(options.appRoot, 'node_modules', '.cache', 'functions-extensions'),
  });
  const parent = join(tmpdir(), `functions-serve-${process.pid}`);
  const chosen = (name: string): string | undefined => (process.env[name]?.trim() === '' ? undefined : process.env[name]?.trim());
  const keys = {
    master: chosen('FUNCTIONS_ADMIN_KEY') ?? newHostKey(),
    function: chosen('FUNCTIONS_KEY') ?? newHostKey(),
    durableSystem: newHostKey(),
  };
  const build = copyHostBuild(options.hostBuild, { parent, keys });
  options.say('Precompiling the host and the extensions (ReadyToRun; once per machine, then from the cache)…');
  const precompiled = await precompileHost(build, extensionsBin, parent, options.say);
  const appDir = copyApp({ appRoot: options.appRoot, extensionsBin: precompiled, parent });
  // The environment wins over local.settings.json, as with `func start`.
  const settings = Object.fromEntries(Object.entries(options.settings).filter(([name]) => process.env[name] === undefined));
  const host = await startRealHost({ build, appDir, settings, port: options.port, verbose: true, startTimeoutMs: 120_000 });
  options.say(`The real Functions host is serving the app on ${host.baseUrl} (keys are checked, as in Azure).`);
  options.say(`Function key: ${keys.function}`);
  options.say(`Master (admin) key: ${keys.master}`);
  return {
    ...host,
    output: () => host.output(),
    restart: (o) => host.restart(o),
    kill: () => host.kill(),
    // The copies of the host and the app go with it.
    stop: async (graceMs) => {
      await host.stop(graceMs);
      rmSync(parent, { recursive: true, force: true });
    },
  };
}
