/**
 * Figures about other processes from Linux's /proc, for benchmarks that measure a host they started:
 * CPU time used so far, when a process started, and the clock both are counted against.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** /proc counts in clock ticks; USER_HZ is 100 on Linux (every architecture Node runs on). */
const clockTicksPerSecond = 100;

/** The fields of /proc/<pid>/stat after "pid (comm) ", from state (index 0). */
function statFields(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) the process has used so far, in ms; NaN when it cannot be read. */
export function processCpuMs(pid: number | undefined): number {
  const fields = pid === undefined ? undefined : statFields(pid);
  // utime and stime are the 14th and 15th fields of the line, the 12th and 13th after "pid (comm) ".
  if (fields === undefined) return NaN;
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicksPerSecond;
}

/** When the process started, in seconds since boot (10 ms resolution); NaN when it cannot be read. */
export function processStartSeconds(pid: number): number {
  const fields = statFields(pid);
  return fields === undefined ? NaN : Number(fields[19]) / clockTicksPerSecond;
}

/** Seconds since boot now: the clock processStartSeconds counts against. */
export function uptimeSeconds(): number {
  return Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
}

/** The processes whose command line contains every one of `parts`. */
export function findProcesses(parts: readonly string[]): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let commandLine: string;
    try {
      commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (parts.every((p) => commandLine.includes(p))) found.push(Number(entry));
  }
  return found;
}

/** The first process whose command line contains every one of `parts`. */
export function findProcess(parts: readonly string[]): number | undefined {
  return findProcesses(parts)[0];
}
