/**
 * Every TypeScript example in the client's docs compiles against the client's real types, so a
 * renamed method or a wrong field in the docs fails here. (The e2e file runs the same calls for real.)
 * Each block becomes the body of an async function in a virtual file, with a few names the prose
 * assumes (`client`, `items`, `signal`, `save`) declared, and the block's own `declare` lines and
 * imports of other packages above it. Blocks fenced `ts entra` (run against a host in entra mode by
 * test/e2e/entra.test.ts) are compiled too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import ts from 'typescript';

const packageRoot = join(__dirname, '..', '..');
const repoRoot = join(packageRoot, '..', '..');
const documents = [join(repoRoot, 'docs', 'client-typescript.md'), join(packageRoot, 'README.md')];

function examples(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/```ts(?: entra)?\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

function virtualModule(block: string): string {
  const lines = block.split('\n').filter((line) => !/^import .* from '@tallyho\/client';$/.test(line));
  // A block's own `declare` lines (what the prose assumes) and imports belong at the top of the module.
  const top = (line: string): boolean => line.startsWith('declare ') || /^import .* from '[^']+';$/.test(line);
  const declared = lines.filter(top);
  const body = lines.filter((line) => !top(line)).join('\n');
  const entry = join(packageRoot, 'src', 'index').replace(/\\/g, '/');
  return [
    `import { TallyhoClient, TallyhoError, TestGateReleases, isTallyhoError, verifyWebhook, type GateReleases, type JobItem, type JobResult } from '${entry}';`,
    'declare const client: TallyhoClient;',
    'declare const items: JobItem[];',
    'declare const signal: AbortSignal;',
    'declare function save(result: JobResult): void;',
    'void TallyhoError; void TestGateReleases; void isTallyhoError; void verifyWebhook;',
    ...declared,
    'export async function example(): Promise<void> {',
    body,
    '}',
  ].join('\n');
}

function diagnostics(sources: ReadonlyMap<string, string>): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts', 'lib.dom.asynciterable.d.ts'],
    types: ['node'],
    typeRoots: [join(repoRoot, 'node_modules', '@types')],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, onError) => {
    const text = sources.get(name);
    return text === undefined ? getSourceFile(name, version, onError) : ts.createSourceFile(name, text, version);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => sources.has(name) || fileExists(name);
  const program = ts.createProgram([...sources.keys()], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file !== undefined && sources.has(d.file.fileName))
    .map((d) => `${d.file?.fileName}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

// One program for every block of every document: building a program (the DOM and Node typings) is
// what costs, not the examples.
test('the examples in the docs compile against the client', () => {
  const sources = new Map<string, string>();
  for (const [d, file] of documents.entries()) {
    const blocks = examples(file);
    expect([file, blocks.length > 0]).toEqual([file, true]);
    blocks.forEach((block, i) => sources.set(join(packageRoot, `docs-${d}-example-${i}.ts`), virtualModule(block)));
  }
  expect(diagnostics(sources)).toEqual([]);
}, 180_000);
