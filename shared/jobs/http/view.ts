/** What the API shows of a job and its results. */
import type * as z from 'zod';

import { isFinished, type JobRecord } from '../ledger/jobRecord';
import type { Progress, StoredResult } from '../ledger/results';
import type { failureView, jobView, resultView } from './schemas';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function jobLinks(job: JobRecord): Record<string, string> {
  const self = `/api/jobs/${job.id}`;
  const links: Record<string, string> = {
    self,
    results: `${self}/results`,
    failures: `${self}/failures`,
    retryFailed: `${self}/retry-failed`,
  };
  const files = job.summary?.files;
  if (typeof files === 'object' && files !== null && !Array.isArray(files)) {
    for (const [key, name] of Object.entries(files)) if (typeof name === 'string') links[key] = `${self}/files/${name}`;
  }
  return links;
}

/** `progress` is needed while the job runs; a finished job carries its final counts. */
export function viewJob(job: JobRecord, progress: Progress | undefined): z.output<typeof jobView> {
  const finished = isFinished(job.phase);
  const succeeded = finished ? (job.succeeded ?? 0) : (progress?.succeeded ?? 0);
  const failed = finished ? (job.failed ?? 0) : (progress?.failed ?? 0);
  const cancelled = finished ? (job.cancelled ?? 0) : (progress?.cancelled ?? 0);
  const state = finished
    ? job.phase
    : job.cancelledAt !== null
      ? 'cancelling'
      : job.round > 0 || succeeded + failed > 0
        ? 'running'
        : 'accepted';
  return {
    id: job.id,
    processor: job.processor,
    state: state as z.output<typeof jobView>['state'],
    round: job.round,
    totals: { items: job.items, succeeded, failed, cancelled, pending: job.items - succeeded - failed - cancelled },
    envelopes: { count: job.envelopes, sent: job.phase === 'enqueuing' ? job.cursor : job.envelopes },
    timings: {
      acceptedAt: iso(job.acceptedAt) as string,
      enqueuedAt: iso(job.enqueuedAt),
      startedAt: iso(job.startedAt ?? progress?.firstAt ?? null),
      lastProgressAt: iso(finished ? job.lastResultAt : (progress?.lastAt ?? null)),
      completedAt: iso(job.completedAt),
      cancelledAt: iso(job.cancelledAt),
      durationMs: job.completedAt === null ? null : job.completedAt - job.acceptedAt,
    },
    summary: job.summary,
    delivery: job.delivery,
    event: job.event,
    links: jobLinks(job),
  };
}

export function viewResult(r: StoredResult): z.output<typeof resultView> {
  return {
    id: r.id,
    status: r.status,
    ...(r.output === undefined ? {} : { output: r.output }),
    ...(r.code === undefined ? {} : { code: r.code }),
    ...(r.reason === undefined ? {} : { reason: r.reason }),
    attempts: r.attempts,
    envelope: r.envelope,
    round: r.round,
    claimCheck: r.claimCheck,
    ...(r.payloadSha256 === undefined ? {} : { payloadSha256: r.payloadSha256 }),
    ...(r.payloadBytes === undefined ? {} : { payloadBytes: r.payloadBytes }),
    recordedAt: iso(r.at) as string,
  };
}

export function viewFailure(r: StoredResult): z.output<typeof failureView> {
  return { id: r.id, code: r.code ?? 'failed', reason: r.reason ?? '', attempts: r.attempts, envelope: r.envelope, round: r.round };
}
