/**
 * The .NET client (clients/dotnet): `dotnet test` on its solution, unit tests and integration tests.
 * The integration tests run against the host of this jest project (the devhost, or the real Functions
 * host in the e2e-real run), started here with keys on against this run's Azurite and handed to the
 * fixture through TALLYHO_BASE_URL and the keys. dotnet is required when CI=true; elsewhere, without
 * it, the tests are skipped with one loud line.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { onceAcrossProcesses } from '../../devhost/realHost/once';
import { describeWithTool, onPath } from '../support/optionalTool';
import { type E2eHost, hostLabel, repoRoot, startE2eHost } from './support/harness';

const solution = join(repoRoot, 'clients', 'dotnet', 'Tallyho.Client.slnx');
const dotnetTool = {
  name: 'dotnet',
  neededBy: 'the .NET client tests (clients/dotnet)',
  enable: 'install the .NET SDK (CI machines have it)',
  locate: () => onPath('dotnet'),
};

function run(command: string, args: readonly string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: repoRoot,
      env: { ...process.env, DOTNET_NOLOGO: '1', DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1', ...env },
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

describeWithTool(dotnetTool, 'the .NET client (clients/dotnet)', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost({
      // Fast queue polling, as the TypeScript e2e jobs tests use, so a job completes in seconds.
      env: {
        AzureFunctionsJobHost__extensions__queues__maxPollingInterval: '00:00:00.200',
        AzureFunctionsJobHost__extensions__queues__visibilityTimeout: '00:00:00',
        TALLYHO_JOBS_RETRY_DELAY_SECONDS: '0',
      },
    });
  });
  afterAll(async () => {
    await host?.stop();
  });

  test(`dotnet test passes (unit tests on fakes, integration tests against the ${hostLabel()})`, async () => {
    // Built once per test run: the devhost and real-host runs of this file may overlap, and two builds
    // writing the same obj/ and bin/ break each other. Each run then tests with results of its own.
    const dir = join(repoRoot, 'test-artifacts', 'dotnet');
    const artifacts = join(dir, 'build');
    const built = join(dir, `built-for-run-${process.env.TEST_RUN_ID ?? 'none'}`);
    mkdirSync(dir, { recursive: true });
    await onceAcrossProcesses(
      join(dir, 'build.lock'),
      () => existsSync(built),
      async () => {
        const build = await run('dotnet', ['build', solution, '--nologo', '--artifacts-path', artifacts], {});
        if (build.code !== 0) throw new Error(`dotnet build failed (exit ${String(build.code)}):\n${build.output.slice(-20_000)}`);
        writeFileSync(built, '');
      },
    );
    const results = join(dir, `results-${host.kind}`);
    const result = await run(
      'dotnet',
      ['test', solution, '--nologo', '--no-build', '--artifacts-path', artifacts, '--results-directory', results],
      {
        TALLYHO_BASE_URL: host.baseUrl,
        TALLYHO_FUNCTION_KEY: host.keys.function ?? '',
        TALLYHO_ADMIN_KEY: host.keys.admin ?? '',
      },
    );
    const summary = result.output.split('\n').filter((line) => /^(Passed|Failed)!|error /.test(line.trim()));
    console.log(`dotnet test clients/dotnet:\n${summary.join('\n')}`);
    if (result.code !== 0) throw new Error(`dotnet test failed (exit ${String(result.code)}):\n${result.output.slice(-20_000)}`);
    expect(summary.filter((line) => line.trim().startsWith('Passed!'))).toHaveLength(2);
  }, 600_000);
});
