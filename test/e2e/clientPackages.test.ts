/**
 * The client packages as a user gets them: `npm pack` of clients/typescript (its prepack builds it:
 * no dist/ beforehand) and `dotnet pack` of clients/dotnet, each installed into a scratch project
 * outside the repository (os.tmpdir()), where the page's examples are compiled and run as printed
 * against a host of this project with keys on and storage of its own: the quick start as one program,
 * the page's other examples as a second (test/support/clientPages.ts). What they print is checked
 * against the output their comments on the page promise.
 *
 * The npm install needs no network: the tarball has no dependencies, and typescript and @types/node
 * (the consumer's compiler) come from the npm cache `npm ci` filled (`--prefer-offline`). The .NET
 * app restores Tallyho.Client from a local folder source and its dependencies from the machine's
 * NuGet cache. dotnet is an optional tool: required when CI=true, one SKIPPED line elsewhere.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';

import { startAzurite, type RunningAzurite } from '../../devhost/azurite';
import { blockAfter, pagePrograms, readPage } from '../support/clientPages';
import { dotnetTool, runProcess } from '../support/dotnetBuild';
import { describeWithTool } from '../support/optionalTool';
import { type E2eHost, externalHost, repoRoot, startE2eHost } from './support/harness';

/** A tool run in `cwd` with the node that runs jest first on PATH (npm's scripts and the programs run on it). */
function run(command: string, args: readonly string[], cwd: string, env: Record<string, string> = {}): ReturnType<typeof runProcess> {
  return runProcess(command, args, {
    cwd,
    env: {
      PATH: [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter),
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      ...env,
    },
  });
}

async function ok(command: string, args: readonly string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const result = await run(command, args, cwd, env);
  if (result.code !== 0)
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited ${String(result.code)}:\n${result.output.slice(-8000)}`);
  return result.output;
}

/** The printed lines, in order, as the comments on the page state them; the pages differ in three. */
const pageLines = (sequence: string, cancelled: string, ledger: string): string[] => [
  sequence,
  'doors: released',
  'in the app: old',
  'in a test: new',
  'refunds: 97',
  cancelled,
  'nightly: cancelled',
  'completed 2',
  'doc-1 succeeded',
  'report: completed',
  'resumed: the same job',
  'thumbnails: completed',
  ledger,
  'doors listed: yes',
  'NotFound 404',
];
const printed = {
  quickStart: ['ORD-0000001-3', 'page-views: 1', 'launch: released'],
  // TypeScript withdraws an aborted increment not yet sent; .NET sends it and stops only the wait.
  ts: pageLines('INV-0000001-3 10 false', 'increment: AbortError', 'ledger: 2 flushed'),
  csharp: pageLines('INV-0000001-3 False', 'increment: cancelled', 'ledger: 1 flushed'),
};

/** Each expected line appears in the output, in order (other lines may come between). */
function expectInOrder(output: string, expected: readonly string[]): void {
  const lines = output.split('\n').map((line) => line.trim());
  let at = 0;
  const found = expected.map((want) => {
    const index = lines.findIndex((line, i) => i >= at && line === want);
    if (index >= 0) at = index + 1;
    return [want, index >= 0];
  });
  expect({ found, output }).toEqual({ found: expected.map((want) => [want, true]), output });
}

/** A host of this project on an Azurite of its own, so the pages' names start fresh. */
function ownHost(): { host: () => E2eHost; env: () => Record<string, string> } {
  let azurite: RunningAzurite | undefined;
  let host: E2eHost | undefined;
  beforeAll(async () => {
    if (!externalHost) azurite = await startAzurite();
    host = await startE2eHost({
      env: {
        AzureWebJobsStorage: azurite?.connectionString,
        // Fast queue polling, so the pages' jobs complete in seconds.
        AzureFunctionsJobHost__extensions__queues__maxPollingInterval: '00:00:00.200',
        TALLYHO_STREAMS_FLUSH_INTERVAL_MS: '200',
      },
    });
  }, 180_000);
  afterAll(async () => {
    await host?.stop();
    await azurite?.stop();
  });
  const started = (): E2eHost => {
    if (host === undefined) throw new Error('the host did not start');
    return host;
  };
  return {
    host: started,
    env: () => ({
      TALLYHO_BASE_URL: started().baseUrl,
      TALLYHO_FUNCTION_KEY: started().keys.function ?? '',
      TALLYHO_ADMIN_KEY: started().keys.admin ?? '',
    }),
  };
}

const installedVersion = (name: string): string =>
  (JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

describe('@tallyho/client, packed with npm pack and installed outside the repository', () => {
  const page = readPage(repoRoot, 'docs/client-typescript.md');
  const programs = pagePrograms(page, 'ts');
  const { env } = ownHost();
  let scratch: string;
  let tarball: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'tallyho-npm-client-'));
    // Packed from a copy without dist/ (as a fresh clone has it), so prepack must build it; the
    // repository's own dist/ (which other suites load) is left alone.
    const source = join(scratch, 'package-source');
    cpSync(join(repoRoot, 'clients', 'typescript'), source, {
      recursive: true,
      filter: (path) => !/[\\/](dist|node_modules|test)$|\.tgz$/.test(path),
    });
    const bin = join(repoRoot, 'node_modules', '.bin');
    await ok('npm', ['pack', '--pack-destination', scratch], source, {
      PATH: [dirname(process.execPath), bin, process.env.PATH ?? ''].join(delimiter),
    });
    tarball = join(scratch, readdirSync(scratch).find((f) => f.endsWith('.tgz')) ?? 'no-tarball');

    const app = join(scratch, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true, type: 'module' }));
    // A consumer's strict NodeNext project without the DOM lib: the package's types must hold there.
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          types: ['node'],
          outDir: 'out',
        },
        include: ['*.ts'],
      }),
    );
    await ok(
      'npm',
      [
        'install',
        '--prefer-offline',
        tarball,
        `typescript@${installedVersion('typescript')}`,
        `@types/node@${installedVersion('@types/node')}`,
      ],
      app,
    );
    writeFileSync(join(app, 'quickstart.ts'), programs.quickStart);
    writeFileSync(join(app, 'page.ts'), programs.rest);
    await ok(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], app);
  }, 300_000);

  afterAll(() => {
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  });

  test('the tarball holds the build, the sources its maps point to and the README, nothing of the tests', async () => {
    const listing = await ok('tar', ['-tzf', tarball], scratch);
    const files = listing.split('\n').filter((f) => f !== '');
    expect(files).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/README.md',
        'package/dist/index.js',
        'package/dist/index.d.ts',
        'package/src/index.ts',
      ]),
    );
    expect(files.filter((f) => /^package\/(test|scripts|node_modules)\//.test(f) || f.endsWith('tsconfig.json'))).toEqual([]);
  });

  test('the quick start, as printed in the page and the package README, runs against the host', async () => {
    expect(blockAfter(readPage(repoRoot, 'clients/typescript/README.md'), '## Quick start', 'ts')).toBe(
      blockAfter(page, '## Quick start', 'ts'),
    );
    const result = await ok(process.execPath, ['out/quickstart.js'], join(scratch, 'app'), env());
    expectInOrder(result, printed.quickStart);
  }, 120_000);

  test("the page's other examples, in page order, run against the host", async () => {
    for (const line of printed.ts)
      expect([line, page.includes(`// ${line}`) || page.includes(`… ${line}`) || page.includes(`${line} …`)]).toEqual([line, true]);
    const result = await ok(process.execPath, ['out/page.js'], join(scratch, 'app'), env());
    expectInOrder(result, printed.ts);
  }, 180_000);

  test('a CommonJS consumer loads it with import(), and with require() where Node loads ES modules so (20.19+, 22.12+)', async () => {
    const app = join(scratch, 'app');
    writeFileSync(join(app, 'imports.cjs'), "import('@tallyho/client').then((m) => console.log(typeof m.TallyhoClient));\n");
    expect((await ok(process.execPath, ['imports.cjs'], app)).trim()).toBe('function');
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    if ((major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major >= 23) {
      writeFileSync(join(app, 'requires.cjs'), "console.log(typeof require('@tallyho/client').TallyhoClient);\n");
      expect((await ok(process.execPath, ['--no-warnings', 'requires.cjs'], app)).trim()).toBe('function');
    }
  });
});

describeWithTool(dotnetTool, 'Tallyho.Client, packed with dotnet pack and added to an app outside the repository', () => {
  const page = readPage(repoRoot, 'docs/client-dotnet.md');
  const programs = pagePrograms(page, 'csharp');
  const { env } = ownHost();
  // A version of its own, so NuGet's global package cache can never hand back an earlier build.
  const version = `0.1.0-e2e.${Date.now()}`;
  let scratch: string;

  const app = (name: string): string => join(scratch, name);

  async function scratchApp(name: string, program: string): Promise<void> {
    mkdirSync(app(name));
    // As `dotnet new console` makes it.
    writeFileSync(
      join(app(name), `${name}.csproj`),
      [
        '<Project Sdk="Microsoft.NET.Sdk">',
        '  <PropertyGroup>',
        '    <OutputType>Exe</OutputType>',
        '    <TargetFramework>net$(BundledNETCoreAppTargetFrameworkVersion)</TargetFramework>',
        '    <ImplicitUsings>enable</ImplicitUsings>',
        '    <Nullable>enable</Nullable>',
        '  </PropertyGroup>',
        '</Project>',
      ].join('\n'),
    );
    writeFileSync(join(app(name), 'Program.cs'), program);
    await ok('dotnet', ['add', 'package', 'Tallyho.Client', '--version', version, '--source', join(scratch, 'packages')], app(name));
    await ok('dotnet', ['build', '--nologo', '-c', 'Release'], app(name));
  }

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'tallyho-nuget-client-'));
    await ok(
      'dotnet',
      [
        'pack',
        join(repoRoot, 'clients', 'dotnet', 'src', 'Tallyho.Client'),
        '-c',
        'Release',
        '-o',
        join(scratch, 'packages'),
        '--artifacts-path',
        join(scratch, 'artifacts'),
        `-p:Version=${version}`,
        '--nologo',
      ],
      repoRoot,
    );
    await scratchApp('QuickStart', programs.quickStart);
    await scratchApp('Page', programs.rest);
  }, 600_000);

  afterAll(() => {
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
    rmSync(join(process.env.NUGET_PACKAGES ?? join(homedir(), '.nuget', 'packages'), 'tallyho.client', version), {
      recursive: true,
      force: true,
    });
  });

  test('the quick start, as printed in the page and the package README, runs against the host', async () => {
    expect(blockAfter(readPage(repoRoot, 'clients/dotnet/README.md'), '## Quick start', 'csharp')).toBe(
      blockAfter(page, '## Quick start', 'csharp'),
    );
    const result = await ok('dotnet', ['run', '--no-build', '-c', 'Release'], app('QuickStart'), env());
    expectInOrder(result, printed.quickStart);
  }, 120_000);

  test("the page's other examples, in page order, run against the host", async () => {
    for (const line of printed.csharp)
      expect([line, page.includes(`// ${line}`) || page.includes(`… ${line}`) || page.includes(`${line} …`)]).toEqual([line, true]);
    const result = await ok('dotnet', ['run', '--no-build', '-c', 'Release'], app('Page'), env());
    expectInOrder(result, printed.csharp);
  }, 180_000);
});
