/**
 * The queue message of a job: an envelope of up to 32 items (or ~48 KB), each inline or as a claim
 * check (a byte range of the job's input blob with its SHA-256). Keys are short because every byte
 * counts four-thirds once the host's base64 encoding is applied. An envelope names its job, round,
 * processor and the job's item count, so a worker needs no job read to process it, and the trace
 * its submission started, so its processing joins that trace.
 */
import { z } from 'zod';

import { traceparentSchema } from '../../telemetry/traceContext';
import { itemId, jobId } from './ids';

export const envelopeVersion = 1;

const jsonValue = z.json();

/** Any JSON value. */
export type JsonValue = z.output<typeof jsonValue>;
export type JsonObject = Record<string, JsonValue>;

const claimCheck = z.strictObject({
  /** `<container>/<blob>` */
  b: z.string().min(1).max(1024),
  /** Byte offset of the item's line in the blob. */
  o: z.number().int().min(0),
  /** Length of the line in bytes (no newline). */
  n: z.number().int().min(1),
  /** SHA-256 of those bytes, hex. */
  h: z.string().regex(/^[0-9a-f]{64}$/),
});

export type ClaimCheck = z.output<typeof claimCheck>;

/**
 * `a`: the item's attempt on this envelope's first delivery. On a declared processor's queue each
 * later delivery of the same message is one more (the attempt is `a + dequeueCount - 1`); items
 * moved to a new message (a split lease, a batch put back after an endpoint's 429) take the attempt
 * they are at, and their new message starts counting deliveries from 1.
 */
const attempt = z.number().int().min(1);

const entry = z.union([
  z.strictObject({ id: itemId, a: attempt, d: z.record(z.string(), jsonValue) }),
  z.strictObject({ id: itemId, a: attempt, c: claimCheck }),
]);

export type EnvelopeEntry = z.output<typeof entry>;

export const envelopeSchema = z.strictObject({
  v: z.literal(envelopeVersion),
  /** Job id. */
  j: jobId,
  /** Envelope id (diagnostics, error rows). */
  e: z.string().min(1).max(64),
  /** Processor name. */
  p: z.string().min(1).max(32),
  /** Round: 0 for the submission, k for the k-th retry-failed. */
  r: z.number().int().min(0),
  /** Items in the whole job: the job is done when this many have a final result. */
  n: z.number().int().min(1),
  /** The submission's traceparent (under the seal, so no queue writer can graft an envelope onto another trace). */
  t: traceparentSchema.optional(),
  i: z.array(entry).min(1),
});

export type Envelope = z.output<typeof envelopeSchema>;

export function envelopeJson(envelope: Envelope): string {
  return JSON.stringify(envelope);
}

export function base64Length(bytes: number): number {
  return 4 * Math.ceil(bytes / 3);
}

export function isClaimCheck(e: EnvelopeEntry): e is Extract<EnvelopeEntry, { c: ClaimCheck }> {
  return 'c' in e;
}
