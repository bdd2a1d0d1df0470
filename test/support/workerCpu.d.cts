export const workerCpuFile: string;

export interface WorkerCpu {
  /** Seconds by file, keyed by project and path (testCosts.cjs). */
  readonly byFile: Map<string, number>;
  /** Seconds by project. */
  readonly byProject: Map<string, number>;
}

export function workerCpu(dir: string | undefined): WorkerCpu;
export function workerCpuLine(byProject: WorkerCpu['byProject']): string;
