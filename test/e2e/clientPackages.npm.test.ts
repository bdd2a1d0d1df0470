/**
 * The TypeScript client package as a user gets it: `npm pack` of clients/typescript (its prepack
 * builds it: no dist/ beforehand), installed into a scratch project outside the repository — both
 * built before jest, and again only when the client changed (test/support/artifacts.cjs) — where
 * the page's examples are compiled and run as printed against a host of this
 * project with keys on and storage of its own: the quick start as one program, the page's other
 * examples as a second (test/support/clientPages.cjs). What they print is checked against the output
 * their comments on the page promise. (The .NET package: clientPackages.nuget.test.ts.)
 *
 * The npm install needs no network: the tarball has no dependencies, and typescript and @types/node
 * (the consumer's compiler) come from the npm cache `npm ci` filled (`--prefer-offline`).
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ensureArtifact } from '../support/artifacts.cjs';
import { blockAfter, pagePrograms, readPage } from '../support/clientPages.cjs';
import { expectInOrder, ok, ownHost, printed } from './support/clientPackages';
import { ownHostTest, repoRoot } from './support/harness';

describe('@tallyho/client, packed with npm pack and installed outside the repository', () => {
  const page = readPage(repoRoot, 'docs/client-typescript.md');
  const programs = pagePrograms(page, 'ts');
  const { env } = ownHost('clientnpm');
  let scratch: string;
  let tarball: string;

  beforeAll(async () => {
    // The tarball and a scratch app with it installed are built before jest, and again only when the
    // client changed (test/support/artifacts.cjs); the page's programs are compiled here, in a scratch
    // app of this run that uses the installed packages.
    const built = await ensureArtifact('npm-client');
    tarball = join(built, 'client.tgz');
    scratch = mkdtempSync(join(tmpdir(), 'tallyho-npm-client-'));
    const app = join(scratch, 'app');
    mkdirSync(app);
    cpSync(join(built, 'app', 'package.json'), join(app, 'package.json'));
    symlinkSync(join(built, 'app', 'node_modules'), join(app, 'node_modules'), 'dir');
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
    writeFileSync(join(app, 'quickstart.ts'), programs.quickStart);
    writeFileSync(join(app, 'page.ts'), programs.rest);
    await ok(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], app);
    // Waits for the artifact, which npm test builds beside jest: a wide net for a busy machine's build.
  }, 20 * 60_000);

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

  // The page's programs use fixed names and expect a fresh app (ORD-0000001-3): a host of their own.
  ownHostTest('the quick start, as printed in the page and the package README, runs against the host', async () => {
    expect(blockAfter(readPage(repoRoot, 'clients/typescript/README.md'), '## Quick start', 'ts')).toBe(
      blockAfter(page, '## Quick start', 'ts'),
    );
    const result = await ok(process.execPath, ['out/quickstart.js'], join(scratch, 'app'), env());
    expectInOrder(result, printed.quickStart);
  });

  ownHostTest("the page's other examples, in page order, run against the host", async () => {
    for (const line of printed.ts)
      expect([line, page.includes(`// ${line}`) || page.includes(`… ${line}`) || page.includes(`${line} …`)]).toEqual([line, true]);
    const result = await ok(process.execPath, ['out/page.js'], join(scratch, 'app'), env());
    expectInOrder(result, printed.ts);
  });

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
