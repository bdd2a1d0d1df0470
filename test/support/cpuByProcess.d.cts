/** What the suite's tests use of the CPU-by-process sampler (./cpuByProcess.cjs). */
interface ProcessCpu {
  /** A process: its pid and start time (pids are reused). */
  readonly pid: string;
  /** User and system CPU so far, in clock ticks. */
  readonly ticks: number;
  readonly commandLine: string;
}

export function kindOf(commandLine: string): string;

/** The ids of the machine's processes, from /proc; undefined where there is none (not Linux). */
export function processIds(): string[] | undefined;

export function cpuAccount(): {
  /** Whether the last sample had this process (its command line need not be read again). */
  knows(pid: string): boolean;
  sample(processes: readonly ProcessCpu[]): void;
  totals(): [string, number][];
};

export function startCpuSampler(intervalMs?: number): { stop(): { kind: string; seconds: number }[] | undefined };
