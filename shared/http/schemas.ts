/** Schemas every capability shares: resource names, idempotency keys, problem documents. */
import * as z from 'zod';

import { appErrorCodes } from '../errors';
import { callerNamePattern, callerNameRule } from '../names';

/**
 * A caller's name (shared/names.ts): safe as a table PartitionKey/RowKey, a blob path segment, a
 * queue-message field, a Durable entity key and instance id, and never one of the app's own ids
 * (it has no `:`). No trailing dot: Azure's blob naming rules forbid a path segment ending with one,
 * and a service that trims it would put `orders.` where `orders` is.
 */
export const resourceName = z.string().min(1).max(63).regex(callerNamePattern, callerNameRule).meta({ example: 'orders' });

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
    // An enum, so clients generate the code union from the document (clients/typescript/src/errors.ts).
    code: z.enum(appErrorCodes),
    instance: z.string().optional(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });

/** A documented error response: what a route answers with problem+json, and when. */
export const problem = (description: string) => ({ description, schema: problemSchema });

/** An ISO-8601 timestamp with an explicit offset, e.g. 2026-03-29T01:30:00Z. */
export const isoTimestamp = z.iso.datetime({ offset: true });
