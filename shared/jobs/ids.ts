/**
 * Identifiers of jobs, items and envelopes. A job submitted with an Idempotency-Key gets an id
 * derived from the key, so a resubmission finds the job it created (even one whose enqueue a crash
 * interrupted) with a single read; other jobs get a time-ordered random id.
 */
import { randomBytes } from 'node:crypto';

import { z } from 'zod';

import type { Signer } from '../signing/signer';

/** Safe as a table RowKey suffix, a blob path segment and a CSV cell without quoting. */
export const itemIdPattern = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export const itemId = z
  .string()
  .regex(itemIdPattern, 'Use 1-128 letters, digits, "_", ".", ":" or "-", starting with a letter or digit')
  .meta({ description: 'Unique within the job; results and failures are keyed by it', example: 'tx-000123' });

export const jobIdPattern = /^[a-z0-9][a-z0-9-]{7,47}$/;

export const jobId = z.string().regex(jobIdPattern, 'Not a job id').meta({ example: '20260301120000-4f9c2a7e1b' });

function stamp(now: number): string {
  return new Date(now)
    .toISOString()
    .replace(/[-:TZ]/g, '')
    .slice(0, 14);
}

/** `yyyyMMddHHmmss-<10 hex>`: sorts by submission time, unguessable enough to not collide. */
export function newJobId(now: number, random: () => Buffer = () => randomBytes(5)): string {
  return `${stamp(now)}-${random().toString('hex')}`;
}

/**
 * `k-<32 hex>`: the same key always names the same job. A keyed MAC, not a plain hash: whoever
 * guesses another caller's Idempotency-Key must still not be able to compute the job id from it.
 */
export function jobIdForKey(key: string, signer: Signer): string {
  return `k-${signer.macHex('job-id', key).slice(0, 32)}`;
}

/** Envelope `n` of round `round` (round 0 = the submission, 1+ = retry-failed runs). */
export function envelopeId(round: number, n: number): string {
  return `${round}.${n}`;
}

/** The retry envelope an envelope sends for its items that failed at `attempt` (deterministic: a redelivery sends the same one). */
export function retryEnvelopeId(parent: string, attempt: number): string {
  return `${parent.replace(/~\d+$/, '')}~${attempt}`;
}
