/**
 * The .NET client package as a user gets it: `dotnet pack` of clients/dotnet, added to two scratch
 * apps outside the repository (os.tmpdir()), where the page's examples are compiled and run as
 * printed against a host of this project with keys on and storage of its own: the quick start as
 * one program, the page's other examples as a second (test/support/clientPages.ts). What they print
 * is checked against the output their comments on the page promise. (The npm package:
 * clientPackages.npm.test.ts.)
 *
 * The apps restore Tallyho.Client from a local folder source and its dependencies from the
 * machine's NuGet cache. dotnet is an optional tool: required when CI=true, one SKIPPED line elsewhere.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

import { blockAfter, pagePrograms, readPage } from '../support/clientPages';
import { dotnetTool } from '../support/dotnetBuild';
import { describeWithTool } from '../support/optionalTool';
import { expectInOrder, ok, ownHost, printed } from './support/clientPackages';
import { ownHostTest, repoRoot } from './support/harness';

describeWithTool(dotnetTool, 'Tallyho.Client, packed with dotnet pack and added to an app outside the repository', () => {
  const page = readPage(repoRoot, 'docs/client-dotnet.md');
  const programs = pagePrograms(page, 'csharp');
  const { env } = ownHost('clientnuget');
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
    // `dotnet add package` has just restored the app.
    await ok('dotnet', ['build', '--nologo', '--no-restore', '-c', 'Release'], app(name));
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
    // Two apps of their own, set up side by side.
    await Promise.all([scratchApp('QuickStart', programs.quickStart), scratchApp('Page', programs.rest)]);
  }, 600_000);

  afterAll(() => {
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
    rmSync(join(process.env.NUGET_PACKAGES ?? join(homedir(), '.nuget', 'packages'), 'tallyho.client', version), {
      recursive: true,
      force: true,
    });
  });

  // The page's programs use fixed names and expect a fresh app (ORD-0000001-3): a host of their own.
  ownHostTest('the quick start, as printed in the page and the package README, runs against the host', async () => {
    expect(blockAfter(readPage(repoRoot, 'clients/dotnet/README.md'), '## Quick start', 'csharp')).toBe(
      blockAfter(page, '## Quick start', 'csharp'),
    );
    const result = await ok('dotnet', ['run', '--no-build', '-c', 'Release'], app('QuickStart'), env());
    expectInOrder(result, printed.quickStart);
  });

  ownHostTest("the page's other examples, in page order, run against the host", async () => {
    for (const line of printed.csharp)
      expect([line, page.includes(`// ${line}`) || page.includes(`… ${line}`) || page.includes(`${line} …`)]).toEqual([line, true]);
    const result = await ok('dotnet', ['run', '--no-build', '-c', 'Release'], app('Page'), env());
    expectInOrder(result, printed.csharp);
  });
});
