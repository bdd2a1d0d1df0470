/**
 * The .NET client package as a user gets it: `dotnet pack` of clients/dotnet, added to two scratch
 * apps outside the repository that hold the page's examples — built before jest, and again only when
 * the client or the page changed (test/support/artifacts.cjs) — and run as
 * printed against a host of this project with keys on and storage of its own: the quick start as
 * one program, the page's other examples as a second (test/support/clientPages.cjs). What they print
 * is checked against the output their comments on the page promise. (The npm package:
 * clientPackages.npm.test.ts.)
 *
 * The apps restore Tallyho.Client from a local folder source and its dependencies from the
 * machine's NuGet cache. dotnet is an optional tool: required when CI=true, one SKIPPED line elsewhere.
 */
import { join } from 'node:path';

import { ensureArtifact } from '../support/artifacts.cjs';
import { blockAfter, readPage } from '../support/clientPages.cjs';
import { dotnetTool } from '../support/dotnetBuild';
import { describeWithTool } from '../support/optionalTool';
import { expectInOrder, ok, ownHost, printed } from './support/clientPackages';
import { ownHostTest, repoRoot } from './support/harness';

describeWithTool(dotnetTool, 'Tallyho.Client, packed with dotnet pack and added to an app outside the repository', () => {
  const page = readPage(repoRoot, 'docs/client-dotnet.md');
  const { env } = ownHost('clientnuget');
  let built: string;

  const app = (name: string): string => join(built, name);

  beforeAll(async () => {
    // The package and the two apps with the page's programs are built before jest, and again only
    // when the client or the page changed (test/support/artifacts.cjs).
    built = await ensureArtifact('nuget-client');
    // Waits for the artifact, which npm test builds beside jest: a wide net for a busy machine's build.
  }, 20 * 60_000);

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
