/** A command run to its end with its output kept: the .NET SDK and crossgen2 calls of the real-host tooling. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface CommandResult {
  /** null when it was killed (a stall). */
  readonly code: number | null;
  readonly output: string;
}

/** The CPU time a process has used, in clock ticks (Linux), or undefined where /proc cannot tell. */
function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/**
 * Runs a command to its end. With `stallMs`, a process that has used no CPU at all for that long is
 * taken as hung and killed (its result then says so): once, beside a soak run, a crossgen2 sat in a
 * futex wait for 14 minutes at 0 s of CPU, and the same compile then took 3 s. A busy machine only
 * slows a command; it never stops its CPU clock for a minute.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; stallMs?: number },
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    let last = { ticks: -1, at: Date.now() };
    const stallMs = options.stallMs;
    const watch =
      stallMs === undefined
        ? undefined
        : setInterval(() => {
            const ticks = child.pid === undefined ? undefined : cpuTicks(child.pid);
            if (ticks === undefined) return;
            if (ticks !== last.ticks) last = { ticks, at: Date.now() };
            else if (Date.now() - last.at >= stallMs) {
              output += `\n(no CPU used for ${stallMs} ms: taken as hung and killed)`;
              child.kill('SIGKILL');
            }
          }, 1000);
    child.once('error', (err) => {
      clearInterval(watch);
      reject(err);
    });
    // 'close', not 'exit': the output pipes may still hold the end of what it printed.
    child.once('close', (code) => {
      clearInterval(watch);
      resolve({ code, output });
    });
  });
}
