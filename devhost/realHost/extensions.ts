/**
 * The app's binding extensions for a host without the extension bundle, built the way
 * `func extensions install` builds them: a .NET project referencing the extension packages (the
 * app's `extensions.csproj`), restored from NuGet and built into a `bin/` that holds the assemblies
 * and `extensions.json`. The build is cached by the project's content and the SDK's version, and a
 * lock makes concurrent callers (test workers) build it once between them.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { runCommand } from './command';
import { onceAcrossProcesses } from './once';

export interface ExtensionsBuildOptions {
  /** The project listing the extensions (e.g. the app's extensions.csproj). */
  readonly project: string;
  /** Where builds are kept, one folder per project content and SDK version. */
  readonly cacheDir: string;
  /** Passed on to `dotnet` (e.g. DOTNET_ROLL_FORWARD, NUGET_PACKAGES). */
  readonly env?: NodeJS.ProcessEnv;
}

function dotnetVersion(env: NodeJS.ProcessEnv): string {
  const probe = spawnSync('dotnet', ['--version'], { encoding: 'utf8', env });
  if (probe.status !== 0) throw new Error(`dotnet --version failed: ${probe.stderr || probe.error?.message}`);
  return probe.stdout.trim();
}

async function run(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  const { code, output } = await runCommand('dotnet', args, { cwd, env });
  if (code !== 0) throw new Error(`dotnet ${args.join(' ')} exited with ${code}:\n${output.slice(-4000)}`);
}

/** The folder holding the built extensions (`extensions.json` and the assemblies): a host's `bin/`. */
export async function buildExtensions(options: ExtensionsBuildOptions): Promise<string> {
  const env = { DOTNET_NOLOGO: '1', DOTNET_CLI_TELEMETRY_OPTOUT: '1', ...(options.env ?? process.env) };
  const project = readFileSync(options.project);
  const key = createHash('sha256').update(project).update(dotnetVersion(env)).digest('hex').slice(0, 16);
  const target = join(options.cacheDir, key);
  const bin = join(target, 'bin');
  mkdirSync(options.cacheDir, { recursive: true });
  await onceAcrossProcesses(
    `${target}.lock`,
    () => existsSync(join(bin, 'extensions.json')),
    async () => {
      // Built in a scratch folder of its own (obj/ and all) and moved into place when complete.
      const scratch = `${target}.${process.pid}`;
      rmSync(scratch, { recursive: true, force: true });
      mkdirSync(scratch, { recursive: true });
      copyFileSync(options.project, join(scratch, 'extensions.csproj'));
      await run(['build', 'extensions.csproj', '--configuration', 'Release', '--output', join(scratch, 'bin')], scratch, env);
      rmSync(target, { recursive: true, force: true });
      renameSync(scratch, target);
    },
  );
  return bin;
}
