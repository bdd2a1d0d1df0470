/**
 * The suite's account of its hosts: every start, restart and stop of a host a test file runs (the
 * e2e harness's, the scale-out cluster's) is one line in the run's costs folder, which the timing
 * reporter sums by project and file (test/support/hostStarts.cjs reads them).
 */
import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

import { hostStartsFile } from './hostStarts.cjs';
import { costsDirVariable, repoPath, testProject } from './testCosts.cjs';

/** What a counted step reads of a host's CPU (ms; NaN where it cannot be read). */
export interface StepCpu<T> {
  /** The life this step ends (a stop, or the process a restart replaces), read before the step. */
  readonly ended?: () => number;
  /** The life this step starts, read once it runs (a start or a restart): what starting it cost. */
  readonly started?: (result: T) => number;
}

/**
 * With the run's costs folder set (jest.config.js makes it; test/support/testCosts.cjs), every host
 * start, restart and stop is a line there with the project and file (or "shared"), the seconds it
 * took (a failed start too) and, on Linux, the CPU seconds of the host's processes (the new life's up
 * to Running, the ended life's in all), and the reporter counts and sums them after the run: the
 * suite's cost in hosts, kept in view.
 */
export async function counted<T>(
  kind: 'devhost' | 'real',
  what: 'start' | 'restart' | 'stop',
  work: () => Promise<T>,
  cpu: StepCpu<T> = {},
): Promise<T> {
  const dir = process.env[costsDirVariable];
  if (dir === undefined || dir === '') return work();
  const file = join(dir, hostStartsFile);
  const testPath = typeof expect === 'undefined' ? undefined : expect.getState().testPath;
  // jest's main process, which starts the shared hosts, is in no project.
  const project = testProject() ?? '-';
  const endedMs = cpu.ended?.() ?? 0;
  const began = performance.now();
  let startedMs = 0;
  try {
    const result = await work();
    startedMs = cpu.started?.(result) ?? 0;
    return result;
  } finally {
    const seconds = ((performance.now() - began) / 1000).toFixed(1);
    const cpuSeconds = (ms: number): string => (Number.isFinite(ms) ? (ms / 1000).toFixed(2) : '-');
    const where = testPath === undefined ? '- shared' : `${project} ${repoPath(testPath)}`;
    // The shared hosts stop in the global teardown, after the reporter has read (and removed) the folder.
    if (existsSync(dir)) appendFileSync(file, `${kind} ${what} ${where} ${seconds} ${cpuSeconds(startedMs)} ${cpuSeconds(endedMs)}\n`);
  }
}
