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

export function nugetPackagesFolder(env: NodeJS.ProcessEnv = process.env): string {
  return env.NUGET_PACKAGES ?? join(homedir(), '.nuget', 'packages');
}

export function findBicep(env: NodeJS.ProcessEnv = process.env): BicepCli | undefined {
  const explicit = env.BICEP_PATH;
  if (explicit !== undefined && explicit !== '') {
    if (!existsSync(explicit)) throw new Error(`BICEP_PATH is set to ${explicit}, which does not exist`);
    return { path: explicit, from: 'BICEP_PATH' };
  }
  for (const dir of (env.PATH ?? '').split(delimiter).filter((d) => d !== '')) {
    const file = join(dir, 'bicep');
    if (executable(file)) return { path: file, from: 'PATH' };
  }
  const packageDir = join(nugetPackagesFolder(env), 'azure.bicep.commandline.linux-x64');
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

export interface BicepRun {
  readonly status: number | null;
  readonly stdout: string;
  /** Diagnostics: `file(line,col) : Warning|Error rule: message`. */
  readonly stderr: string;
}

export function runBicep(cli: BicepCli, args: readonly string[]): BicepRun {
  const result = spawnSync(cli.path, args, {
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
    // The CLI needs ICU unless told otherwise; invariant mode is enough for compiling.
    env: { ...process.env, DOTNET_SYSTEM_GLOBALIZATION_INVARIANT: process.env.DOTNET_SYSTEM_GLOBALIZATION_INVARIANT ?? '1' },
  });
  if (result.error !== undefined) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Warning and error lines in a Bicep CLI's output. */
export function diagnosticsOf(output: string): string[] {
  return output.split('\n').filter((line) => /:\s*(Warning|Error)\s/.test(line));
}
