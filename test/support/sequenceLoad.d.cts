export interface TakesNumbers {
  take(count: number): Promise<number[]>;
}

export interface DriveOptions {
  /** Numbers to issue in all. */
  readonly numbers: number;
  /** Concurrent request loops (default 4). */
  readonly callers?: number;
  /** Each request takes 1..maxCount numbers (default 20). */
  readonly maxCount?: number;
  /** Uniform in [0, 1): picks each request's count (seeded, so runs repeat). */
  readonly random: () => number;
  /** Pause before retrying a retryable failure (default 5 ms). */
  readonly retryDelayMs?: number;
}

export interface DriveResult {
  /** In the order the allocator issued them. */
  readonly issued: number[];
  /** Codes of the retryable failures that were retried. */
  readonly failures: string[];
}

export declare function driveAllocator(allocator: TakesNumbers, options: DriveOptions): Promise<DriveResult>;
