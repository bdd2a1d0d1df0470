/**
 * The .NET client (clients/dotnet): `dotnet test` on its solution, unit tests and integration tests.
 * The integration tests run against the host of this jest project (the devhost, or the real Functions
 * host in the e2e-real run), started here with keys on against this run's Azurite and handed to the
 * fixture through TALLYHO_BASE_URL and the keys. Their Entra tests run against a second host, in
 * `entra` mode, with a tenant stand-in (test/support/localTenant.ts) whose managed identity endpoint
 * Azure.Identity's DefaultAzureCredential asks, as on App Service; no test may be skipped here. dotnet
 * is required when CI=true; elsewhere, without it, the tests are skipped with one loud line.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { buildDotnetSolution, dotnetDir, dotnetTool, runDotnet } from '../support/dotnetBuild';
import { type LocalTenant, startLocalTenant } from '../support/localTenant';
import { describeWithTool } from '../support/optionalTool';
import { type E2eHost, hostLabel, ownHostTest, repoRoot, startE2eHost, storageOf } from './support/harness';
import { queuesPolledPromptly } from './support/jobs';

/** The lines of the page's `csharp entra` example, each trimmed, without its using directives. */
function entraExample(): string[] {
  const page = readFileSync(join(repoRoot, 'docs', 'client-dotnet.md'), 'utf8');
  const block = /^```csharp entra\n([\s\S]*?)^```$/m.exec(page)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('using '));
}

describeWithTool(dotnetTool, 'the .NET client (clients/dotnet)', () => {
  let host: E2eHost;
  let tenant: LocalTenant;
  let entraHost: E2eHost;

  beforeAll(async () => {
    tenant = await startLocalTenant({ roles: ['Tallyho.Admin'] });
    entraHost = await startE2eHost({ env: tenant.appSettings });
    host = await startE2eHost({
      // Fast queue polling, as the TypeScript e2e jobs tests use, so a job completes in seconds.
      env: {
        ...queuesPolledPromptly,
        AzureFunctionsJobHost__extensions__queues__visibilityTimeout: '00:00:00',
        TALLYHO_JOBS_RETRY_DELAY_SECONDS: '0',
        // Named callers (CallersTests.cs) need the key that signs their credentials.
        TALLYHO_CREDENTIALS_KEY: randomBytes(32).toString('base64'),
      },
    });
  });
  afterAll(async () => {
    await host?.dispose();
    await entraHost?.dispose();
    await tenant?.close();
  });

  test("the page's Entra example is the body of the Entra integration test, as printed", () => {
    const example = entraExample();
    expect(example.length).toBeGreaterThan(3);
    const source = readFileSync(join(repoRoot, 'clients/dotnet/test/Tallyho.Client.IntegrationTests/EntraTests.cs'), 'utf8');
    const lines = source
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
    const start = lines.indexOf(example[0] ?? '');
    expect(lines.slice(start, start + example.length)).toEqual(example);
  });

  // The integration tests read the stream logs the host wrote, in its storage.
  ownHostTest(
    `dotnet test passes (unit tests on fakes, integration tests against the ${hostLabel()})`,
    async () => {
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
          TALLYHO_ENTRA_BASE_URL: entraHost.baseUrl,
          TALLYHO_ENTRA_AUDIENCE: tenant.audience,
          ...tenant.managedIdentityEnv,
        },
      );
      const summary = result.output.split('\n').filter((line) => /^(Passed|Failed)!|error /.test(line.trim()));
      console.log(`dotnet test clients/dotnet:\n${summary.join('\n')}`);
      if (result.code !== 0) throw new Error(`dotnet test failed (exit ${String(result.code)}):\n${result.output.slice(-20_000)}`);
      expect(summary.filter((line) => line.trim().startsWith('Passed!'))).toHaveLength(2);
      // Every test ran: the Entra tests skip only where no entra host was given.
      expect(summary.filter((line) => !/Skipped:\s+0,/.test(line))).toEqual([]);
    },
    20 * 60_000,
  );
});
