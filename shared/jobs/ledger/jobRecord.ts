/**
 * The stored job: one table row (PartitionKey = job id, RowKey = `job`). Every change is a
 * conditional write with the row's ETag, so the phase moves through its transitions exactly once:
 *
 *   enqueuing -> enqueued -> finalizing -> completed | completedWithFailures | cancelled
 *        ^                                               |
 *        +------------------ retry-failed ---------------+
 *
 * A cancel (`cancelledAt` set) records every item without a final result as `cancelled`; the
 * finalization that follows ends the job `cancelled` without running the processor's reduce.
 * `enqueuing` carries a cursor (envelopes of the round sent so far) and a short lease, so a
 * resubmission or the reconciler can finish an interrupted enqueue from where it stopped.
 */
import { AppError } from '../../errors';
import { owns, type Reader } from '../../ownership';
import type { JsonObject } from '../envelopes/envelope';

export type JobPhase = 'enqueuing' | 'enqueued' | 'finalizing' | 'completed' | 'completedWithFailures' | 'cancelled';

/** `none` before completion; `pending` from completion until the event is out. */
type EventState = 'none' | 'pending' | 'published' | 'notConfigured';

/** The processor's `deliver` step: `pending` from completion until it has run. */
type DeliveryState = 'none' | 'pending' | 'delivered' | 'notConfigured';

/**
 * Where a job's envelopes go: the work queues, whose triggers run an in-app processor, or a declared
 * processor's own queue, whose workers lease them (or the pusher pushes them to its endpoint).
 */
export type JobRoute = { readonly kind: 'inApp' } | { readonly kind: 'declared'; readonly queue: string };

export const inAppRoute: JobRoute = { kind: 'inApp' };

export interface JobRecord {
  readonly id: string;
  readonly processor: string;
  readonly route: JobRoute;
  readonly items: number;
  /** SHA-256 of the input file: a keyed resubmission must match it. */
  readonly inputSha256: string;
  readonly inputBytes: number;
  /** Packing limits fixed at submission, so a resumed enqueue cuts exactly the same envelopes. */
  readonly pack: { readonly maxItems: number; readonly maxBytes: number; readonly claimCheckBytes: number };
  readonly phase: JobPhase;
  /** 0 for the submission; k after the k-th retry-failed. */
  readonly round: number;
  /** Envelopes of the current round, and how many of them are sent. */
  readonly envelopes: number;
  readonly cursor: number;
  /** Items the current round re-runs (all for round 0). */
  readonly roundItems: number;
  /** Round > 0: the failed rows of the previous round are marked for retry (done before any envelope is sent). */
  readonly marked: boolean;
  /** Who may advance an enqueuing or finalizing job, and until when (ms). */
  readonly lease: string;
  readonly leaseUntil: number;
  readonly acceptedAt: number;
  readonly enqueuedAt: number | null;
  /** First and latest result recorded, as known at the last completion (a running job reads them from its tallies). */
  readonly startedAt: number | null;
  readonly lastResultAt: number | null;
  readonly completedAt: number | null;
  readonly updatedAt: number;
  /** Final counts, written with the completion. */
  readonly succeeded: number | null;
  readonly failed: number | null;
  readonly cancelled: number | null;
  /** When `DELETE /api/jobs/{id}` asked for it (ms); null while the job is not cancelled. */
  readonly cancelledAt: number | null;
  /** The processor's summary (files written, figures), written with the completion. */
  readonly summary: JsonObject | null;
  readonly delivery: DeliveryState;
  readonly event: EventState;
  /** The submission's W3C traceparent: its envelopes and its completion continue that trace. */
  readonly trace?: string;
  /**
   * Who owns it (a Caller id, shared/identity/caller.ts): its submitter, or the owner of the schedule
   * or gated run that submitted it. Absent on rows written before owners were recorded: those are
   * an admin's only (docs/security.md "Upgrading").
   */
  readonly owner?: string;
}

/** Who reads or acts on a job: a Caller (shared/identity/caller.ts) has this shape. */
export type JobReader = Reader;

/**
 * The job for its owner or an admin; for anyone else the same 404 as a job that does not exist, so
 * a job id is no capability and a stranger cannot tell a job from nothing.
 */
export function requireOwnerOf(job: JobRecord, reader: JobReader): JobRecord {
  if (owns(reader, job.owner)) return job;
  throw jobNotFound(job.id);
}

export function jobNotFound(id: string): AppError {
  return new AppError('NotFound', `Job ${id} does not exist`);
}

export interface StoredJob {
  readonly job: JobRecord;
  readonly etag: string;
}

export const jobRowKey = 'job';

const phases: readonly JobPhase[] = ['enqueuing', 'enqueued', 'finalizing', 'completed', 'completedWithFailures', 'cancelled'];
const eventStates: readonly EventState[] = ['none', 'pending', 'published', 'notConfigured'];
const deliveryStates: readonly DeliveryState[] = ['none', 'pending', 'delivered', 'notConfigured'];

export function isFinished(phase: JobPhase): boolean {
  return phase === 'completed' || phase === 'completedWithFailures' || phase === 'cancelled';
}

export function jobEntity(job: JobRecord): Record<string, unknown> & { partitionKey: string; rowKey: string } {
  return {
    partitionKey: job.id,
    rowKey: jobRowKey,
    processor: job.processor,
    // The row's `queue` is '' for the work queues (rows of every version read the same).
    queue: job.route.kind === 'inApp' ? '' : job.route.queue,
    items: job.items,
    inputSha256: job.inputSha256,
    inputBytes: job.inputBytes,
    packItems: job.pack.maxItems,
    packBytes: job.pack.maxBytes,
    claimCheckBytes: job.pack.claimCheckBytes,
    phase: job.phase,
    round: job.round,
    envelopes: job.envelopes,
    cursor: job.cursor,
    roundItems: job.roundItems,
    marked: job.marked,
    lease: job.lease,
    leaseUntil: job.leaseUntil,
    acceptedAt: job.acceptedAt,
    enqueuedAt: job.enqueuedAt ?? -1,
    startedAt: job.startedAt ?? -1,
    lastResultAt: job.lastResultAt ?? -1,
    completedAt: job.completedAt ?? -1,
    updatedAt: job.updatedAt,
    succeeded: job.succeeded ?? -1,
    failed: job.failed ?? -1,
    cancelled: job.cancelled ?? -1,
    cancelledAt: job.cancelledAt ?? -1,
    summary: job.summary === null ? '' : JSON.stringify(job.summary),
    delivery: job.delivery,
    event: job.event,
    trace: job.trace ?? '',
    owner: job.owner ?? '',
  };
}

function num(raw: Record<string, unknown>, key: string, id: string): number {
  const value = raw[key];
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new AppError('CorruptState', `Job ${id}: "${key}" is not a number`);
  return value;
}

function str(raw: Record<string, unknown>, key: string, id: string): string {
  const value = raw[key];
  if (typeof value !== 'string') throw new AppError('CorruptState', `Job ${id}: "${key}" is not a string`);
  return value;
}

function oneOf<T extends string>(raw: Record<string, unknown>, key: string, id: string, allowed: readonly T[]): T {
  const value = str(raw, key, id);
  if (!(allowed as readonly string[]).includes(value)) throw new AppError('CorruptState', `Job ${id}: "${key}" is "${value}"`);
  return value as T;
}

const optional = (n: number): number | null => (n < 0 ? null : n);

export function parseJob(id: string, raw: Record<string, unknown>): JobRecord {
  const summary = str(raw, 'summary', id);
  return {
    id,
    processor: str(raw, 'processor', id),
    // Rows from before declared processors have no queue: their envelopes go to the work queues.
    route: typeof raw.queue === 'string' && raw.queue !== '' ? { kind: 'declared', queue: raw.queue } : inAppRoute,
    items: num(raw, 'items', id),
    inputSha256: str(raw, 'inputSha256', id),
    inputBytes: num(raw, 'inputBytes', id),
    pack: { maxItems: num(raw, 'packItems', id), maxBytes: num(raw, 'packBytes', id), claimCheckBytes: num(raw, 'claimCheckBytes', id) },
    phase: oneOf(raw, 'phase', id, phases),
    round: num(raw, 'round', id),
    envelopes: num(raw, 'envelopes', id),
    cursor: num(raw, 'cursor', id),
    roundItems: num(raw, 'roundItems', id),
    marked: raw.marked === true,
    lease: str(raw, 'lease', id),
    leaseUntil: num(raw, 'leaseUntil', id),
    acceptedAt: num(raw, 'acceptedAt', id),
    enqueuedAt: optional(num(raw, 'enqueuedAt', id)),
    startedAt: optional(num(raw, 'startedAt', id)),
    lastResultAt: optional(num(raw, 'lastResultAt', id)),
    completedAt: optional(num(raw, 'completedAt', id)),
    updatedAt: num(raw, 'updatedAt', id),
    succeeded: optional(num(raw, 'succeeded', id)),
    failed: optional(num(raw, 'failed', id)),
    cancelled: typeof raw.cancelled === 'number' ? optional(raw.cancelled) : null,
    cancelledAt: typeof raw.cancelledAt === 'number' ? optional(raw.cancelledAt) : null,
    summary: summary === '' ? null : (JSON.parse(summary) as JsonObject),
    delivery: oneOf(raw, 'delivery', id, deliveryStates),
    event: oneOf(raw, 'event', id, eventStates),
    // Rows written before traces were kept have none.
    ...(typeof raw.trace === 'string' && raw.trace !== '' ? { trace: raw.trace } : {}),
    // Rows written before owners were recorded have none (an admin's only).
    ...(typeof raw.owner === 'string' && raw.owner !== '' ? { owner: raw.owner } : {}),
  };
}
