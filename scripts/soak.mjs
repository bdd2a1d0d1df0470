// `npm run soak -- --instances 3 --minutes 10 --kills 5`: the long scale-out run (test/scaleout/).
// The app is built first (the instances serve dist/), the harness is bundled with esbuild (it is
// TypeScript under test/, which the build does not compile) and run with the arguments given.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = spawnSync(process.execPath, [join(root, 'scripts', 'build-if-changed.mjs')], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);
const outDir = join(root, 'node_modules', '.cache', 'tallyho-soak');
mkdirSync(outDir, { recursive: true });
const outfile = join(outDir, 'soak.cjs');
await build({
  entryPoints: [join(root, 'test', 'scaleout', 'soak.ts')],
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  sourcemap: 'inline',
  outfile,
  logLevel: 'warning',
});
const run = spawnSync(process.execPath, ['--enable-source-maps', outfile, ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
process.exit(run.status ?? 1);
