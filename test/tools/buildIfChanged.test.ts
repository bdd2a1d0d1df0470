/**
 * `npm start` builds only when an input changed (scripts/build-if-changed.mjs): run in a scratch
 * checkout whose `npm run build` only writes the outputs and counts its runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const script = join(__dirname, '..', '..', 'scripts', 'build-if-changed.mjs');

const fakeBuild = [
  "const fs = require('fs');",
  "for (const d of ['dist/devhost', 'dist/app/console-assets']) fs.mkdirSync(d, { recursive: true });",
  "for (const f of ['dist/devhost/start.js', 'dist/app/index.js', 'dist/app/tallyho.js', 'dist/app/console-assets/manifest.json']) fs.writeFileSync(f, '');",
  "fs.appendFileSync('builds.log', 'x');",
].join(' ');

describe('build-if-changed', () => {
  let root: string;
  const run = (...args: string[]): { status: number | null; stdout: string } => {
    const result = spawnSync(process.execPath, [script, '--root', root, ...args], { encoding: 'utf8' });
    return { status: result.status, stdout: result.stdout };
  };
  const builds = (): number => {
    try {
      return readFileSync(join(root, 'builds.log'), 'utf8').length;
    } catch {
      return 0;
    }
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'tallyho-build-'));
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({ name: 'scratch', private: true, scripts: { build: `node -e "${fakeBuild}"` } }),
    );
    mkdirSync(join(root, 'functions'));
    writeFileSync(join(root, 'functions', 'index.ts'), 'export {};\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  test('builds the first time, then not again until a source changes', () => {
    expect(run('--check').status).toBe(1);
    expect(run().status).toBe(0);
    expect(builds()).toBe(1);

    const again = run();
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('up to date');
    expect(builds()).toBe(1);
    expect(run('--check').status).toBe(0);

    writeFileSync(join(root, 'functions', 'index.ts'), 'export const changed = 1;\n');
    expect(run('--check').status).toBe(1);
    expect(run().status).toBe(0);
    expect(builds()).toBe(2);
  }, 60_000);

  test('a new source file, a removed one, or a missing output makes a build due', () => {
    expect(run().status).toBe(0);
    expect(run('--check').status).toBe(0);

    writeFileSync(join(root, 'functions', 'more.ts'), 'export {};\n');
    expect(run('--check').status).toBe(1);
    expect(run().status).toBe(0);

    unlinkSync(join(root, 'functions', 'more.ts'));
    expect(run('--check').status).toBe(1);
    expect(run().status).toBe(0);

    unlinkSync(join(root, 'dist', 'app', 'tallyho.js'));
    expect(run('--check').status).toBe(1);
  }, 60_000);
});
