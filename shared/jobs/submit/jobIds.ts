/**
 * New job ids. A job submitted with an Idempotency-Key gets an id derived from the key, so a
 * resubmission finds the job it created (even one whose enqueue a crash interrupted) with a single
 * read; other jobs get a time-ordered random id. Both have the form ./ids.ts checks (`jobIdPattern`).
 */
import { randomBytes } from 'node:crypto';

import type { Signer } from '../../signing/signer';

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
 * Whose key it is: a caller's `Idempotency-Key`, or one the app derives for a job it submits
 * itself (a schedule run's `<schedule>#<n>`, a gated run's `gate-run:<gate>:<run>`).
 */
export type KeySpace = 'caller' | 'app';

/**
 * `k-<32 hex>`: the same key always names the same job. A keyed MAC, not a plain hash: whoever
 * guesses another caller's Idempotency-Key must still not be able to compute the job id from it.
 * The app's keys are MACed under their own subkey, so a caller who sends `gate-run:g:r1` as an
 * Idempotency-Key names a different job from the gated run's, never the run's own. With an `owner`
 * (a Caller id) the key names a job among that owner's only: two callers who happen to choose the
 * same Idempotency-Key get two jobs, and neither can replay (and so read) the other's.
 */
export function jobIdForKey(key: string, signer: Signer, space: KeySpace = 'caller', owner?: string): string {
  const named = owner === undefined ? key : `${owner}\n${key}`;
  return `k-${signer.macHex(space === 'app' ? 'app-job-id' : 'job-id', named).slice(0, 32)}`;
}
