/**
 * The .NET client (clients/dotnet): `dotnet test` on its solution, unit tests and integration tests.
 * The integration tests run against the host of this jest project (the devhost, or the real Functions
 * host in the e2e-real run), started here with keys on against this run's Azurite and handed to the
 * fixture through TALLYHO_BASE_URL and the keys. dotnet is required when CI=true; elsewhere, without
 * it, the tests are skipped with one loud line.
 */
import { join } from 'node:path';

import { buildDotnetSolution, dotnetDir, dotnetTool, runDotnet } from '../support/dotnetBuild';
import { describeWithTool } from '../support/optionalTool';
import { type E2eHost, hostLabel, startE2eHost, storageOf } from './support/harness';
import { queuesPolledPromptly } from './support/jobs';

describeWithTool(dotnetTool, 'the .NET client (clients/dotnet)', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost({
      // Fast queue polling, as the TypeScript e2e jobs tests use, so a job completes in seconds.
      env: {
        ...queuesPolledPromptly,
        AzureFunctionsJobHost__extensions__queues__visibilityTimeout: '00:00:00',
        TALLYHO_JOBS_RETRY_DELAY_SECONDS: '0',
      },
    });
  });
  afterAll(async () => {
    await host?.stop();
  });

  test(`dotnet test passes (unit tests on fakes, integration tests against the ${hostLabel()})`, async () => {
    // Built once per test run (test/support/dotnetBuild.ts); each host's run tests with results of its own.
    const { solution, artifacts } = await buildDotnetSolution();
    const result = await runDotnet(
      [
        'test',
        solution,
        '--nologo',
        '--no-build',
        '--artifacts-path',
        artifacts,
        '--results-directory',
        join(dotnetDir, `results-${host.kind}`),
      ],
      {
        TALLYHO_BASE_URL: host.baseUrl,
        TALLYHO_FUNCTION_KEY: host.keys.function ?? '',
        TALLYHO_ADMIN_KEY: host.keys.admin ?? '',
        // The fixture reads the stream logs the host wrote, in the host's own storage account.
        TEST_STORAGE_CONNECTION: storageOf(host),
      },
    );
    const summary = result.output.split('\n').filter((line) => /^(Passed|Failed)!|error /.test(line.trim()));
    console.log(`dotnet test clients/dotnet:\n${summary.join('\n')}`);
    if (result.code !== 0) throw new Error(`dotnet test failed (exit ${String(result.code)}):\n${result.output.slice(-20_000)}`);
    expect(summary.filter((line) => line.trim().startsWith('Passed!'))).toHaveLength(2);
  }, 600_000);
});
