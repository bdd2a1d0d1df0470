export interface HostStarts {
  /** The run's starts, restarts and stop times by kind, as the report prints them; undefined when none were counted. */
  readonly total: string | undefined;
  /** Each file's starts and restarts by kind, keyed by project and path (testCosts.cjs; "shared" for the shared hosts). */
  readonly byFile: Map<string, Record<string, number>>;
  /** What the hosts' own processes cost in CPU, by kind, as the report prints it; undefined when nothing could be read. */
  readonly cpu?: string | undefined;
  /** What each file's hosts' processes cost in CPU seconds, by kind, keyed as byFile (the shared hosts left out). */
  readonly cpuByFile: Map<string, Record<string, number>>;
}

export const hostStartsFile: string;

/** The account of the run's costs folder (testCosts.cjs); nothing when it or its file is missing. */
export function hostStarts(dir: string | undefined): HostStarts;
export function costliestHosts(cpuByFile: HostStarts['cpuByFile'], shown: number): string[];
