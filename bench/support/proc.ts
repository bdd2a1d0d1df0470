/**
 * Figures about other processes from Linux's /proc, for benchmarks that measure a host they started:
 * CPU time used so far, when a process started, and the clock both are counted against.
 */
import { readdirSync, readFileSync } from 'node:fs';

import { clockTicksPerSecond, processCpuMs, statFields } from '../../devhost/realHost/cpu';

export { processCpuMs };

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
