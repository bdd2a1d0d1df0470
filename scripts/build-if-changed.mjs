// `npm start`'s build step: runs `npm run build` only when an input of the build changed since the
// last build it recorded. The check hashes the contents of every input file (not mtimes: a checkout or
// a copy moves mtimes without changing anything, and an edit within the same second keeps them), so it
// is correct after `git switch` or an edited file, and costs a few tens of milliseconds.
//
//   node scripts/build-if-changed.mjs            build when stale, then record the inputs
//   node scripts/build-if-changed.mjs --check    exit 0 when up to date, 1 when a build is due (no build)
//   --root DIR                                   another checkout (the tests use a scratch folder)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values: options } = parseArgs({
  options: { check: { type: 'boolean', default: false }, root: { type: 'string' } },
});
const root = options.root ?? join(dirname(fileURLToPath(import.meta.url)), '..');

/** What `npm run build` (scripts/build.mjs) reads: the sources, the tsconfigs esbuild follows, the build scripts and the installed packages. */
const inputDirs = ['functions', 'shared', 'docgen', 'devhost', 'bench', 'console', 'clients/typescript/src'];
const inputFiles = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'clients/typescript/tsconfig.json',
  'console/tsconfig.json',
  'scripts/build.mjs',
  'scripts/build-app.mjs',
  'scripts/app-entry.cjs',
  'scripts/build-devhost.mjs',
  'scripts/build-console.mjs',
];
/** Outputs `npm start` needs; a build is due when one is missing, whatever the stamp says. */
const outputs = ['dist/devhost/start.js', 'dist/app/index.js', 'dist/app/tallyho.js', 'dist/app/console-assets/manifest.json'];
const stampFile = join(root, 'dist', '.build-inputs');

function* filesUnder(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') yield* filesUnder(path);
    } else if (entry.isFile()) yield path;
  }
}

function fingerprint() {
  const hash = createHash('sha256');
  const files = [...inputDirs.flatMap((d) => [...filesUnder(join(root, d))]), ...inputFiles.map((f) => join(root, f))];
  for (const file of files) {
    hash.update(relative(root, file));
    hash.update('\0');
    hash.update(existsSync(file) && statSync(file).isFile() ? readFileSync(file) : 'missing');
    hash.update('\0');
  }
  return hash.digest('hex');
}

function recorded() {
  try {
    return readFileSync(stampFile, 'utf8').trim();
  } catch {
    return undefined;
  }
}

const current = fingerprint();
const upToDate = recorded() === current && outputs.every((o) => existsSync(join(root, o)));

if (options.check) process.exit(upToDate ? 0 : 1);
if (upToDate) {
  console.log('[start] dist/ is up to date with the sources: not rebuilding (npm run build forces a build)');
} else {
  console.log('[start] Building (the sources changed since the last build)');
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (build.status !== 0) process.exit(build.status ?? 1);
  // Recorded as it was before the build: an edit made while it ran is still seen as a change next time.
  writeFileSync(stampFile, `${current}\n`);
}
