// Runs the compiled benchmarks one after another (all of them, or those named on the command line:
// `npm run bench -- sequences devhost`). Each is its own process so one cannot warm up another.
// Options (`--real-host`, …) are passed on to every benchmark run.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = join(import.meta.dirname, '..', 'dist', 'bench');
const available = readdirSync(dir)
  .filter((f) => f.endsWith('.js'))
  .map((f) => f.slice(0, -3))
  .sort();
const options = process.argv.slice(2).filter((a) => a.startsWith('--'));
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const run = wanted.length > 0 ? wanted : available;
let failed = 0;
for (const name of run) {
  const file = join(dir, `${name}.js`);
  if (!existsSync(file)) {
    console.error(`No benchmark named ${name}; available: ${available.join(', ')}`);
    failed++;
    continue;
  }
  const result = spawnSync(process.execPath, ['--expose-gc', file, ...options], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
