/**
 * The .NET solution (clients/dotnet: the client, its tests, the sample worker) built once per test
 * run into test-artifacts/dotnet/build. The suites that need it (the .NET client's tests, the mixed
 * TypeScript/.NET worker job) run on both hosts, possibly at once, and two builds writing the same
 * obj/ and bin/ break each other; so the first builds and the others wait, then all run the output.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { onceAcrossProcesses } from '../../devhost/realHost/once';
import { onPath } from './optionalTool';

const repoRoot = join(__dirname, '..', '..');
const solution = join(repoRoot, 'clients', 'dotnet', 'Tallyho.Client.slnx');
export const dotnetDir = join(repoRoot, 'test-artifacts', 'dotnet');
const dotnetArtifacts = join(dotnetDir, 'build');

/** dotnet, which .NET suites need: required when CI=true, announced as skipped elsewhere. */
export const dotnetTool = {
  name: 'dotnet',
  neededBy: 'the .NET client tests and its package test (clients/dotnet)',
  enable: 'install the .NET SDK (CI machines have it)',
  locate: () => onPath('dotnet'),
};

/** Runs a tool to its end, its stdout and stderr together. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { readonly cwd?: string; readonly env?: Record<string, string> } = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? repoRoot,
      env: { ...process.env, DOTNET_NOLOGO: '1', DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    // 'exit' can come before the last output is read ('close' waits for the pipes), but a build
    // server dotnet leaves running may hold the pipes open: then the output so far is all there is.
    child.once('close', (code) => resolve({ code, output }));
    child.once('exit', (code) => setTimeout(() => resolve({ code, output }), 5000).unref());
  });
}

export function runDotnet(args: readonly string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return runProcess('dotnet', args, { env });
}

/** Builds the solution unless this test run already did; returns where `dotnet test --no-build` finds it. */
export async function buildDotnetSolution(): Promise<{ solution: string; artifacts: string }> {
  const built = join(dotnetDir, `built-for-run-${process.env.TEST_RUN_ID ?? 'none'}`);
  mkdirSync(dotnetDir, { recursive: true });
  await onceAcrossProcesses(
    join(dotnetDir, 'build.lock'),
    () => existsSync(built),
    async () => {
      const build = await runDotnet(['build', solution, '--nologo', '--artifacts-path', dotnetArtifacts], {});
      if (build.code !== 0) throw new Error(`dotnet build failed (exit ${String(build.code)}):\n${build.output.slice(-20_000)}`);
      writeFileSync(built, '');
    },
  );
  return { solution, artifacts: dotnetArtifacts };
}

/** The built assembly of one project of the solution (artifacts layout: bin/<project>/debug/<project>.dll). */
export const dotnetAssembly = (project: string): string => join(dotnetArtifacts, 'bin', project, 'debug', `${project}.dll`);
