/**
 * The two clients' pages are one manual in two languages: the same sections in the same order, in
 * the docs and in the packages' READMEs, and each README's quick start is its page's. (That the
 * examples run: test/e2e/clientPackages.npm.test.ts and clientPackages.nuget.test.ts.)
 */
import { join } from 'node:path';

import { blockAfter, headings, pagePrograms, readPage } from '../support/clientPages.cjs';

const repoRoot = join(__dirname, '..', '..');

test('docs/client-typescript.md and docs/client-dotnet.md have the same sections', () => {
  const ts = headings(readPage(repoRoot, 'docs/client-typescript.md'));
  expect(ts).toEqual(expect.arrayContaining(['## Install', '## Quick start', '## Set up a client', '## Errors']));
  expect(headings(readPage(repoRoot, 'docs/client-dotnet.md'))).toEqual(ts);
});

test("the packages' READMEs have the same sections, and each quick start is its page's", () => {
  const ts = readPage(repoRoot, 'clients/typescript/README.md');
  const dotnet = readPage(repoRoot, 'clients/dotnet/README.md');
  expect(headings(ts)).toEqual(['## Install', '## Quick start', '## Develop']);
  expect(headings(dotnet)).toEqual(headings(ts));
  expect(blockAfter(ts, '## Quick start', 'ts')).toBe(blockAfter(readPage(repoRoot, 'docs/client-typescript.md'), '## Quick start', 'ts'));
  expect(blockAfter(dotnet, '## Quick start', 'csharp')).toBe(
    blockAfter(readPage(repoRoot, 'docs/client-dotnet.md'), '## Quick start', 'csharp'),
  );
});

test('a page becomes two programs: the quick start, then the other examples, each after the first in a scope of its own', () => {
  const page = [
    '## Quick start',
    '```csharp',
    'using Tallyho.Client;',
    'var a = 1;',
    '```',
    '## Set up',
    '```csharp',
    'using Tallyho.Client;',
    'var client = 2;',
    '```',
    '```csharp sketch',
    'not run',
    '```',
    '```csharp',
    'using Tallyho.Client.Gates;',
    'var gate = client;',
    '```',
  ].join('\n');
  const programs = pagePrograms(page, 'csharp');
  expect(programs.quickStart).toBe('using Tallyho.Client;\n\nvar a = 1;\n');
  expect(programs.rest).toBe('using Tallyho.Client;\nusing Tallyho.Client.Gates;\n\nvar client = 2;\n\n{\nvar gate = client;\n\n}');
});
