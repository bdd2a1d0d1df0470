/** Schemas every capability shares: resource names, idempotency keys, problem documents. */
import { z } from 'zod';

/**
 * A name that is safe as a table PartitionKey/RowKey, a blob path segment, a queue-message field and
 * a durable entity key: letters, digits, `-`, `_`, `.`; starting with a letter or digit; 1–63 chars.
 */
export const resourceName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'Use 1-63 letters, digits, "-", "_" or ".", starting with a letter or digit')
  .meta({ example: 'orders' });

export const idempotencyKeyHeader = {
  name: 'Idempotency-Key',
  description:
    'Makes a retry of this request return the first response instead of doing the work again (kept for TALLYHO_IDEMPOTENCY_TTL_SECONDS).',
} as const;

export const idempotencyKey = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'Use 1-200 printable ASCII characters without spaces');

/** Loose: a problem may carry extension members (RFC 9457 §3.2), e.g. the conflicting settings. */
export const problemSchema = z
  .looseObject({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
    instance: z.string().optional(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });

/** A documented error response: what a route answers with problem+json, and when. */
export const problem = (description: string) => ({ description, schema: problemSchema });

/** An ISO-8601 timestamp with an explicit offset, e.g. 2026-03-29T01:30:00Z. */
export const isoTimestamp = z.iso.datetime({ offset: true });
