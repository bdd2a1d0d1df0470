/**
 * The .NET solution (clients/dotnet: the client, its tests, the sample worker), built once and reused
 * until its sources change (test/support/artifacts.cjs; `npm test` builds it before jest). The suites
 * that need it (the .NET client's tests, the mixed TypeScript/.NET worker job) run its output.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

import { ensureArtifact } from './artifacts.cjs';
import { onPath } from './optionalTool';
import { waitingFor } from './waits';

const repoRoot = join(__dirname, '..', '..');
const solution = join(repoRoot, 'clients', 'dotnet', 'Tallyho.Client.slnx');
/** Where `dotnet test` writes its results (one folder per host kind). */
export const dotnetDir = join(repoRoot, 'test-artifacts', 'dotnet-results');

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
  let output = '';
  // A wait like any other (test/support/waits.ts): given up when its test ends first (jest's timeout),
  // the process is killed and what it printed so far is the report.
  return waitingFor(
    `${command} ${args.slice(0, 2).join(' ')}`,
    (signal) =>
      new Promise((resolve, reject) => {
        const child = spawn(command, args, {
          cwd: options.cwd ?? repoRoot,
          env: {
            ...process.env,
            DOTNET_NOLOGO: '1',
            DOTNET_CLI_TELEMETRY_OPTOUT: '1',
            DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1',
            ...options.env,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        signal.addEventListener('abort', () => child.kill('SIGKILL'), { once: true });
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.once('error', reject);
        // 'exit' can come before the last output is read ('close' waits for the pipes), but a build
        // server dotnet leaves running may hold the pipes open: then the output so far is all there is.
        child.once('close', (code) => resolve({ code, output }));
        child.once('exit', (code) => setTimeout(() => resolve({ code, output }), 5000).unref());
      }),
    () => output.slice(-20_000),
  );
}

export function runDotnet(args: readonly string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return runProcess('dotnet', args, { env });
}

let built: string | undefined;

/** The solution's build (made now when its sources changed since the last); where `dotnet test --no-build` finds it. */
export async function buildDotnetSolution(): Promise<{ solution: string; artifacts: string }> {
  built = await ensureArtifact('dotnet');
  return { solution, artifacts: built };
}

/** The built assembly of one project of the solution (artifacts layout: bin/<project>/debug/<project>.dll), after buildDotnetSolution. */
export const dotnetAssembly = (project: string): string => {
  if (built === undefined) throw new Error('dotnetAssembly before buildDotnetSolution');
  return join(built, 'bin', project, 'debug', `${project}.dll`);
};
