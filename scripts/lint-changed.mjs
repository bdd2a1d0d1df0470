/**
 * `npm run test:fast`'s lint: eslint and prettier on the files that differ from the branch's upstream
 * (or from HEAD without one) and the untracked ones, then the whole-graph checks, which are cheap
 * (dependency rules, unused exports). Why not everything: type-aware eslint and prettier over the
 * whole repository take about 100 s of CPU, more than the tier's 90 s on 2 cores by themselves, and a
 * file nobody touched was linted when it last changed. `npm run lint` (part of `npm test`, which CI
 * runs) still lints every file. The one thing this can miss: a type change that makes an untouched
 * file break a type-aware rule. The typecheck in the same tier catches the type errors themselves.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const git = (...args) => spawnSync('git', args, { encoding: 'utf8' });

function base() {
  const upstream = git('merge-base', 'HEAD', '@{upstream}');
  return upstream.status === 0 ? upstream.stdout.trim() : 'HEAD';
}

const since = base();
const changed = [
  ...git('diff', '--name-only', '--diff-filter=d', since).stdout.split('\n'),
  ...git('ls-files', '--others', '--exclude-standard').stdout.split('\n'),
].filter((path, i, all) => path !== '' && all.indexOf(path) === i && existsSync(path));

const code = changed.filter((path) => /\.(ts|mts|cts|js|mjs|cjs)$/.test(path));
const label = since === 'HEAD' ? 'the last commit' : `the upstream (${since.slice(0, 10)})`;
console.log(`lint: ${changed.length} file(s) differ from ${label}; eslint and prettier check those (npm run lint checks all)`);

function run(command, args) {
  const result = spawnSync(command, args, { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (code.length > 0) run('npx', ['eslint', '--max-warnings', '0', '--no-warn-ignored', ...code]);
if (changed.length > 0) run('npx', ['prettier', '--check', '--log-level', 'warn', '--ignore-unknown', ...changed]);
run('npm', ['run', '-s', 'lint:imports']);
run('npm', ['run', '-s', 'lint:unused']);
