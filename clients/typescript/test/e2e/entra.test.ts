/**
 * The client with a Microsoft Entra ID credential against the host of the run in `entra` mode: the
 * real `DefaultAzureCredential` of @azure/identity gets its tokens by its managed identity path from a
 * tenant stand-in on this machine (test/support/localTenant.ts), whose signing keys the app checks
 * them against (TALLYHO_ENTRA_AUTHORITY). A client with the credential is answered; one without it,
 * or with only a function key, is 401. The page's Entra example (docs/client-typescript.md, fenced
 * `ts entra`) runs here as printed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';

import { DefaultAzureCredential } from '@azure/identity';
import ts from 'typescript';

import { type E2eHost, hostLabel, ownHostTest, repoRoot, startE2eHost } from '../../../../test/e2e/support/harness';
import { unique } from '../../../../test/e2e/support/names';
import { type LocalTenant, startLocalTenant } from '../../../../test/support/localTenant';
import { TallyhoClient } from '../../src/client';

/** The page's `ts entra` blocks, each as a function of the names it imports, `process` and `console`. */
function entraExamples(): string[] {
  const page = readFileSync(join(repoRoot, 'docs', 'client-typescript.md'), 'utf8');
  return [...page.matchAll(/^```ts entra\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
}

type Example = (
  TallyhoClientClass: typeof TallyhoClient,
  DefaultAzureCredentialClass: typeof DefaultAzureCredential,
  process: { env: Record<string, string> },
  console: { log: (...args: unknown[]) => void },
) => Promise<void>;

function compile(block: string): Example {
  const imports = ["import { DefaultAzureCredential } from '@azure/identity';", "import { TallyhoClient } from '@tallyho/client';"];
  const lines = block.split('\n');
  const unknownImports = lines.filter((line) => line.startsWith('import ') && !imports.includes(line));
  if (unknownImports.length > 0) throw new Error(`the example imports what this test does not provide: ${unknownImports.join('; ')}`);
  const body = lines.filter((line) => !line.startsWith('import ')).join('\n');
  const source = `(async function (TallyhoClient, DefaultAzureCredential, process, console) {\n${body}\n})`;
  const js = ts.transpileModule(source, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.None } }).outputText;
  return runInThisContext(js) as Example;
}

describe(`@tallyho/client with a token credential, against the ${hostLabel()} in entra mode`, () => {
  let tenant: LocalTenant;
  let host: E2eHost;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    tenant = await startLocalTenant({ roles: ['Tallyho.Admin'] });
    host = await startE2eHost({ env: tenant.appSettings });
    // Where DefaultAzureCredential's managed identity path looks, as App Service sets it for an app.
    for (const [name, value] of Object.entries(tenant.managedIdentityEnv)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  }, 120_000);
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await host?.dispose();
    await tenant?.close();
  });

  ownHostTest('DefaultAzureCredential: 200 with the token, 401 without one and with only a function key', async () => {
    const name = unique('entra');
    const client = new TallyhoClient(host.url('/api'), new DefaultAzureCredential(), { audience: tenant.audience });
    await client.counters.configure(name);
    for (let i = 0; i < 3; i++) await client.increment(name);
    expect((await client.counters.get(name, { consistent: true })).value).toBe(3);
    // One token served every call: the client cached it.
    expect(tenant.tokensIssued()).toBe(1);

    const withoutCredential = new TallyhoClient({ baseUrl: host.url('/api'), retry: { retries: 0 } });
    const withKeyOnly = new TallyhoClient({ baseUrl: host.url('/api'), functionKey: host.keys.function ?? 'a-key', retry: { retries: 0 } });
    for (const stranger of [withoutCredential, withKeyOnly]) {
      const refused = await stranger.counters.get(name).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'Unauthorized', status: 401 });
    }
    await client.close();
  });

  ownHostTest("the page's Entra example runs as printed", async () => {
    const examples = entraExamples();
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) {
      const printed: string[] = [];
      const env = { TALLYHO_BASE_URL: host.url('/api'), TALLYHO_AUDIENCE: tenant.audience };
      await compile(example)(TallyhoClient, DefaultAzureCredential, { env }, { log: (...args) => printed.push(args.join(' ')) });
      const promised = [...example.matchAll(/console\.log\(.*\); \/\/ (.+)$/gm)].map((m) => m[1]);
      expect(printed).toEqual(promised);
    }
  });
});
