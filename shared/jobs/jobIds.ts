/**
 * New job ids. A job submitted with an Idempotency-Key gets an id derived from the key, so a
 * resubmission finds the job it created (even one whose enqueue a crash interrupted) with a single
 * read; other jobs get a time-ordered random id. Both have the form ./ids.ts checks (`jobIdPattern`).
 */
import { randomBytes } from 'node:crypto';

import type { Signer } from '../signing/signer';

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
