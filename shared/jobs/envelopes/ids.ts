/**
 * The forms of job, item and envelope ids (./jobIds.ts makes new job ids). Pure: the API schemas
 * import this module, and orchestrations import those.
 */
import * as z from 'zod';

/** Safe as a table RowKey suffix, a blob path segment and a CSV cell without quoting. */
export const itemIdPattern = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export const itemId = z
  .string()
  .regex(itemIdPattern, 'Use 1-128 letters, digits, "_", ".", ":" or "-", starting with a letter or digit')
  .meta({ description: 'Unique within the job; results and failures are keyed by it', example: 'tx-000123' });

const jobIdPattern = /^[a-z0-9][a-z0-9-]{7,47}$/;

export const jobId = z.string().regex(jobIdPattern, 'Not a job id').meta({ example: '20260301120000-4f9c2a7e1b' });

/** A file a processor writes (`jobs/{id}/files/{name}`): safe as a blob name and a URL segment. */
export const fileNamePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Envelope `n` of round `round` (round 0 = the submission, 1+ = retry-failed runs). */
export function envelopeId(round: number, n: number): string {
  return `${round}.${n}`;
}

/** The retry envelope an envelope sends for its items that failed at `attempt` (deterministic: a redelivery sends the same one). */
export function retryEnvelopeId(parent: string, attempt: number): string {
  return `${parent.replace(/~\d+$/, '')}~${attempt}`;
}
