/**
 * The real-host facts the devhost relies on live in the repository (devhost/docs/real-host.md): every
 * citation of a section there names a heading that exists, and nothing cites research notes a clone
 * does not have.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '..', '..');
const skipped = new Set(['node_modules', 'dist', '.git', 'coverage', 'test-artifacts', '.azurite', '.deploy', '.bicep']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (skipped.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.(ts|tsx|js|mjs|md)$/.test(entry.name) ? [path] : [];
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
function anchors(markdown: string): Set<string> {
  const headings = markdown.split('\n').filter((line) => /^#{1,6} /.test(line));
  return new Set(
    headings.map((h) =>
      h
        .replace(/^#+ /, '')
        .toLowerCase()
        .replace(/[^a-z0-9 -]/g, '')
        .replace(/ /g, '-'),
    ),
  );
}

// This file names the patterns it looks for.
const files = sources(root).filter((file) => file !== __filename);

test('every section of devhost/docs/real-host.md that the repository cites exists', () => {
  const known = anchors(readFileSync(join(root, 'devhost', 'docs', 'real-host.md'), 'utf8'));
  const cited = files.flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/real-host\.md#([a-z0-9-]+)/g)].map((m) => ({ file: relative(root, file), anchor: m[1] })),
  );
  expect(cited.length).toBeGreaterThan(20);
  expect(cited.filter((c) => !known.has(c.anchor as string))).toEqual([]);
});

test('no file cites research notes outside the repository', () => {
  const outside = files
    .filter((file) => /shared\/reference\/|real-host-observations|shared\/functions-host/.test(readFileSync(file, 'utf8')))
    .map((file) => relative(root, file));
  expect(outside).toEqual([]);
});
