/**
 * A real host runs in a process group of its own (so a kill reaches its Node worker too), which also
 * means it outlives the process that started it when that one dies without running its exit hooks:
 * SIGKILL (a test runner killed at its time limit, an out-of-memory kill). The starter's `exit` hook
 * covers every other end. A watch covers this one: a small Node process that holds a pipe from the
 * starter and kills the host's group when the pipe closes, which the kernel does however the starter
 * dies. It ignores SIGINT, SIGTERM and SIGHUP: a Ctrl+C in the terminal reaches it as well, and it
 * must not go before the starter has stopped its hosts (a graceful stop is part of what they do).
 */
import { spawn } from 'node:child_process';

const script = [
  'const group = Number(process.argv[1]);',
  "for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => undefined);",
  "process.stdin.on('data', () => undefined);",
  "process.stdin.on('end', () => { try { process.kill(-group, 'SIGKILL'); } catch {} process.exit(0); });",
].join(' ');

export interface GroupWatch {
  /** The watch's own process. */
  readonly pid: number | undefined;
  /** The group ended (or is being ended) by its starter: the watch goes, killing nothing. */
  release(): void;
}

/** Watches the process group `group` (its leader's pid) on behalf of this process. */
export function watchGroup(group: number): GroupWatch {
  const watch = spawn(process.execPath, ['-e', script, String(group)], { stdio: ['pipe', 'ignore', 'ignore'] });
  // A watch that cannot start (no room for a process) leaves the exit hook alone to cover the group.
  watch.on('error', () => undefined);
  watch.stdin.on('error', () => undefined);
  return {
    pid: watch.pid,
    release() {
      watch.kill('SIGKILL');
    },
  };
}
