/**
 * A real host's process group dies with the process that started it, however that one dies: the
 * watch (devhost/realHost/groupWatch.ts) holds a pipe from the starter and kills the group when the
 * kernel closes it. Before, a test runner killed outright (SIGKILL at a time limit) left its real
 * hosts running, holding ports and storage. The "host" here is a `sleep` in a group of its own, as
 * the real host is; the starter is a Node process using the built module (dist/, as `npm start` does).
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

import { until } from '../../test/support/waits';

const built = join(__dirname, '..', '..', 'dist', 'devhost', 'realHost', 'groupWatch.js');

/** Starts the group, watched; prints its pid and the watch's; a line on stdin releases the watch. */
const starter = [
  "const { spawn } = require('node:child_process');",
  `const { watchGroup } = require(${JSON.stringify(built)});`,
  "const host = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });",
  'const watch = watchGroup(host.pid);',
  "process.stdin.on('data', () => { watch.release(); process.stdout.write('released\\n'); });",
  "process.stdout.write(host.pid + ' ' + watch.pid + '\\n');",
].join(' ');

/** A process (pid > 0) or a process group (< 0) exists. */
const alive = (id: number): boolean => {
  try {
    process.kill(id, 0);
    return true;
  } catch {
    return false;
  }
};

interface Watched {
  readonly starter: ChildProcessByStdio<Writable, Readable, null>;
  readonly group: number;
  readonly watch: number;
  readonly lines: string[];
}

/** Every group a test started, killed after it whatever happened (a failed test must not leave its sleep behind). */
const started = new Set<number>();
afterEach(() => {
  for (const group of started) if (alive(-group)) process.kill(-group, 'SIGKILL');
  started.clear();
});

async function startWatched(): Promise<Watched> {
  const child = spawn(process.execPath, ['-e', starter], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  child.stdout.on('data', (chunk: Buffer) =>
    lines.push(
      ...chunk
        .toString()
        .split('\n')
        .filter((l) => l !== ''),
    ),
  );
  const [group, watch] = await until('the starter to print its group', () => lines[0]?.split(' ').map(Number));
  if (group !== undefined) started.add(group);
  return { starter: child, group: group ?? NaN, watch: watch ?? NaN, lines };
}

async function killed(child: ChildProcessByStdio<Writable, Readable, null>): Promise<void> {
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exit;
}

test('the group dies when its starter is killed outright (no exit hook runs)', async () => {
  const { starter: child, group } = await startWatched();
  expect(alive(-group)).toBe(true);
  await killed(child);
  await until('the watched group to be gone', () => (alive(-group) ? undefined : true));
  expect(alive(-group)).toBe(false);
});

/** The signals a process has handlers for (Linux: SigCgt in /proc/<pid>/status). */
function caught(pid: number): bigint {
  const line = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return BigInt(`0x${line?.[1] ?? '0'}`);
}

// Whether the watch has its handlers yet is read from /proc (Linux); elsewhere this test is skipped, loudly.
const onLinux = process.platform === 'linux';
if (!onLinux)
  process.stderr.write('\nSKIPPED devhost/test/groupWatch.test.ts "the watch outlives a Ctrl+C": it reads /proc (Linux only)\n');

(onLinux ? test : test.skip)('the watch outlives a Ctrl+C or a SIGTERM, so the starter can still stop its hosts gracefully', async () => {
  const { starter: child, group, watch } = await startWatched();
  // Once its handlers are in place (a signal during its own start-up would end it: the exit hook
  // alone covers a host then).
  const handled =
    (1n << BigInt(constants.signals.SIGINT - 1)) |
    (1n << BigInt(constants.signals.SIGTERM - 1)) |
    (1n << BigInt(constants.signals.SIGHUP - 1));
  await until('the watch to handle SIGINT, SIGTERM and SIGHUP', () => ((caught(watch) & handled) === handled ? true : undefined));
  process.kill(watch, 'SIGINT');
  process.kill(watch, 'SIGTERM');
  process.kill(watch, 'SIGHUP');
  await killed(child);
  await until('the watched group to be gone', () => (alive(-group) ? undefined : true));
  expect(alive(-group)).toBe(false);
});

test('a released watch kills nothing: the starter ended the group itself', async () => {
  const { starter: child, group, watch, lines } = await startWatched();
  child.stdin.write('release\n');
  await until('the watch to be released', () => (lines.includes('released') ? true : undefined));
  await until('the released watch to be gone', () => (alive(watch) ? undefined : true));
  await killed(child);
  // The watch is gone, so nothing is left to kill the group: it is still there.
  expect(alive(-group)).toBe(true);
});
