/** What the console reads from the API (the fields it shows; the OpenAPI document has the rest). */
export interface Listing<T> {
  readonly items: T[];
  readonly unreadable: { readonly name: string; readonly detail: string }[];
  /** More follow than the pages read so far. */
  readonly more: boolean;
}

export interface CounterView {
  readonly name: string;
  readonly mode: 'hits' | 'sharded';
  readonly partitions: number;
  readonly safetyWindowSeconds: number;
}

export interface CounterValue {
  readonly name: string;
  readonly value: number;
  readonly watermark: string | null;
  readonly pendingHits: number;
}

export interface GateView {
  readonly name: string;
  readonly state: 'closed' | 'released';
  readonly generation: number;
  readonly releaseAt: string | null;
  readonly releasedAt: string | null;
  readonly releasedBy: string | null;
  readonly releaseHow: 'api' | 'schedule' | null;
  readonly releaseNote: string | null;
  readonly waiters: { readonly waiting: number; readonly registered: number; readonly late: number; readonly proceeded: number };
}

export interface ScheduleRun {
  readonly at: string;
  readonly kind: string;
  readonly outcome: 'running' | 'succeeded' | 'failed' | 'skipped' | 'missed';
  readonly reason?: string;
  readonly detail?: string;
  readonly count?: number;
}

export interface ScheduleView {
  readonly id: string;
  readonly state: 'pending' | 'active' | 'paused' | 'cancelled' | 'completed';
  readonly nextFireAt: string | null;
  readonly at?: string;
  readonly cron?: string;
  readonly timeZone?: string;
  readonly target: { readonly type?: unknown };
  readonly runCount: number;
  readonly runs: ScheduleRun[];
  readonly pendingTriggers: number;
  readonly delivery?: { readonly mode: string; readonly sequenceNumber: string | null };
}

export interface JobView {
  readonly id: string;
  readonly processor: string;
  readonly state: 'accepted' | 'running' | 'cancelling' | 'completed' | 'completedWithFailures' | 'cancelled';
  readonly round: number;
  readonly totals: {
    readonly items: number;
    readonly succeeded: number;
    readonly failed: number;
    readonly cancelled: number;
    readonly pending: number;
  };
  readonly timings: { readonly acceptedAt: string; readonly completedAt: string | null; readonly durationMs: number | null };
  readonly links: Record<string, string>;
}

export interface JobResult {
  readonly id: string;
  readonly status: 'succeeded' | 'failed' | 'cancelled' | 'retrying';
  readonly output?: unknown;
  readonly code?: string;
  readonly reason?: string;
}

export interface JobFailure {
  readonly id: string;
  readonly code: string;
  readonly reason: string;
  readonly attempts: number;
  readonly envelope: string;
}

export interface StreamView {
  readonly type: string;
  readonly route: { readonly partition: string; readonly resource: string; readonly version: number; readonly source: string };
  readonly writer: {
    readonly exists: boolean;
    readonly owns: string;
    readonly accepted: number;
    /** Every event with a lower index is in the log. */
    readonly flushedThrough: number;
    readonly bufferDepth: number;
    readonly maxBuffered: number;
    readonly inFlight: number;
    readonly flushLagMs: number;
    readonly lastFlush: { readonly at: string; readonly events: number; readonly bytes: number } | null;
    readonly lastError: { readonly at: string; readonly message: string; readonly attempts: number } | null;
    readonly totals: { readonly accepted: number; readonly flushes: number; readonly refusedFull: number };
  };
}

/** GET /api/figures/jobs: the work queues' backlog and each declared processor's, read now (the client's type, from the OpenAPI document). */
export type { JobFigures } from '../clients/typescript/src/index.js';

/** GET /api/figures/counters: how far the rollup is behind, read now. */
export interface CounterFigures {
  readonly readAt: string;
  readonly rollupLagSeconds: number;
  readonly oldestUnfoldedAt: string | null;
  readonly partitionsWaiting: number;
  readonly countersWaiting: readonly string[];
  readonly truncated: boolean;
}

/** GET /api/figures/schedules: how late the latest runs started, read now. */
export interface ScheduleFigures {
  readonly readAt: string;
  readonly schedules: number;
  readonly worstLatenessSeconds: number;
  readonly latestRuns: readonly {
    readonly id: string;
    readonly due: string;
    readonly startedAt: string;
    readonly latenessSeconds: number;
  }[];
  readonly overdue: readonly { readonly id: string; readonly nextFireAt: string }[];
  readonly truncated: boolean;
}
