/**
 * Finds a Bicep CLI the way .ci/run provides one: `BICEP_PATH`, then `bicep` on PATH, then the
 * NuGet package `Azure.Bicep.CommandLine.linux-x64` restored by `dotnet restore infra/tools` into
 * the NuGet global packages folder (its `tools/bicep` is a self-contained executable).
 */
import { spawnSync } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

export interface BicepCli {
  readonly path: string;
  /** Where it was found: BICEP_PATH, PATH or NuGet. */
  readonly from: string;
}

/** The NuGet package .ci/run restores; named in every "not found" message so the fix is obvious. */
export const bicepPackage = 'Azure.Bicep.CommandLine.linux-x64';

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).map((n) => Number.parseInt(n, 10) || 0);
  const pb = b.split(/[.-]/).map((n) => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function nugetPackagesFolder(env: NodeJS.ProcessEnv = process.env): string {
  return env.NUGET_PACKAGES ?? join(homedir(), '.nuget', 'packages');
}

/**
 * The CLI, or undefined when there is none. `BICEP_PATH` set to a missing file counts as none, so
 * pointing it nowhere is how a machine with the CLI checks the fallback (and the CI failure).
 */
export function findBicep(env: NodeJS.ProcessEnv = process.env): BicepCli | undefined {
  const explicit = env.BICEP_PATH;
  if (explicit !== undefined && explicit !== '') return existsSync(explicit) ? { path: explicit, from: 'BICEP_PATH' } : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter).filter((d) => d !== '')) {
    const file = join(dir, 'bicep');
    if (executable(file)) return { path: file, from: 'PATH' };
  }
  const packageDir = join(nugetPackagesFolder(env), bicepPackage.toLowerCase());
  if (!existsSync(packageDir)) return undefined;
  const versions = readdirSync(packageDir).sort(compareVersions).reverse();
  for (const version of versions) {
    const file = join(packageDir, version, 'tools', 'bicep');
    if (!existsSync(file)) continue;
    // NuGet extraction drops the exec bit.
    if (!executable(file)) chmodSync(file, 0o755);
    return { path: file, from: `NuGet ${version}` };
  }
  return undefined;
}

/** How to get the CLI, naming every place findBicep looked and the package that provides it. */
export function howToGetBicep(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.BICEP_PATH !== undefined && env.BICEP_PATH !== '' ? `BICEP_PATH (${env.BICEP_PATH}: no such file), ` : '';
  return (
    `restore the NuGet package ${bicepPackage} with \`dotnet restore infra/tools/bicep.csproj\` (.ci/run does), or set BICEP_PATH ` +
    `(looked in ${explicit}PATH and ${join(nugetPackagesFolder(env), bicepPackage.toLowerCase())})`
  );
}

export interface BicepRun {
  readonly status: number | null;
  readonly stdout: string;
  /** Diagnostics: `file(line,col) : Warning|Error rule: message`. */
  readonly stderr: string;
}

export function runBicep(cli: BicepCli, args: readonly string[], extraEnv: Readonly<Record<string, string>> = {}): BicepRun {
  const result = spawnSync(cli.path, args, {
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
    // The CLI needs ICU unless told otherwise; invariant mode is enough for compiling.
    env: {
      ...process.env,
      DOTNET_SYSTEM_GLOBALIZATION_INVARIANT: process.env.DOTNET_SYSTEM_GLOBALIZATION_INVARIANT ?? '1',
      ...extraEnv,
    },
  });
  if (result.error !== undefined) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Info, warning and error lines in a Bicep CLI's output, each once (linting main.bicep repeats a module's). */
export function diagnosticsOf(output: string): string[] {
  return [...new Set(output.split('\n').filter((line) => /:\s*(Info|Warning|Error)\s/.test(line)))];
}
