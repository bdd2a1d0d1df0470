/**
 * CPU time other processes have used, from Linux's /proc (NaN elsewhere, or once a process is gone):
 * what a host this tooling started has cost, for the test suite's report of where its time went and
 * for the benchmarks.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** /proc counts in clock ticks; USER_HZ is 100 on Linux (every architecture Node runs on). */
export const clockTicksPerSecond = 100;

/** The fields of /proc/<pid>/stat after "pid (comm) ", from state (index 0). */
export function statFields(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
  } catch {
    return undefined;
  }
}

/** utime + stime, the 12th and 13th fields after "pid (comm) ", in ms. */
const cpuOf = (fields: readonly string[]): number => ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicksPerSecond;

/** CPU time (user + system) the process has used so far, in ms; NaN when it cannot be read. */
export function processCpuMs(pid: number | undefined): number {
  const fields = pid === undefined ? undefined : statFields(pid);
  return fields === undefined ? NaN : cpuOf(fields);
}

/**
 * CPU time (user + system) the live processes of a process group have used so far, in ms: a real
 * host and its Node worker (./process.ts starts them in a group of their own). NaN without /proc.
 */
export function groupCpuMs(group: number): number {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return NaN;
  }
  let total = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    // The process group is the 3rd field after "pid (comm) ".
    if (fields !== undefined && Number(fields[2]) === group) total += cpuOf(fields);
  }
  return total;
}
