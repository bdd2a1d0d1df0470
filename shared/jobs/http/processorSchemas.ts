/** Request and response schemas of the processor and lease API (validation and the OpenAPI document). */
import * as z from 'zod';

import { leaseIdPattern } from '../delivery/leaseId';
import { processorName } from '../processors/processorDefinition';

export { completionBody } from '../delivery/verdicts';
export { declareBody } from '../processors/processorDefinition';

export const processorParams = z.strictObject({ name: processorName });

export const processorView = z
  .object({
    name: z.string(),
    type: z.enum(['external', 'webhook']),
    batchSize: z.number().int(),
    leaseSeconds: z.number().int(),
    maxAttempts: z.number().int(),
    retry: z.object({ delaySeconds: z.number(), multiplier: z.number(), maxDelaySeconds: z.number() }),
    itemSchema: z.record(z.string(), z.unknown()).nullable(),
    workers: z.array(z.string()).meta({ description: 'Caller ids that may lease its batches besides holders of its worker role' }),
    idleLimitSeconds: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'A job no worker served this long expires; null: TALLYHO_JOBS_IDLE_LIMIT_SECONDS' }),
    queue: z.string().meta({ description: "The processor's own storage queue" }),
    url: z.string().optional(),
    timeoutSeconds: z.number().int().optional(),
    concurrency: z.number().int().optional(),
    secret: z.string().optional().meta({ description: 'Webhook only, shown once: when declared, and when rotated. `whsec_` + base64' }),
    previousSecretValidUntil: z.string().nullable().optional(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Processor' });

export const processorList = z.object({ processors: z.array(processorView) }).meta({ id: 'ProcessorList' });

export const secretView = z
  .object({
    name: z.string(),
    secret: z.string().meta({ description: 'The new secret, shown once (`whsec_` + base64)' }),
    previousSecretValidUntil: z.string().meta({ description: 'Pushes are signed with both secrets until then' }),
  })
  .meta({ id: 'ProcessorSecret' });

export const leaseRequest = z
  .strictObject({
    wait: z
      .number()
      .int()
      .min(0)
      .max(60)
      .default(20)
      .meta({ description: 'Seconds to wait for a batch when none is ready (long poll), 0-60' }),
    maxItems: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .meta({ description: "At most this many items (default and ceiling: the processor's batchSize)" }),
  })
  .meta({ id: 'LeaseRequest' });

const leasedItem = z.object({
  id: z.string(),
  jobId: z.string(),
  attempt: z.number().int().meta({ description: '1 for the first attempt' }),
  data: z.record(z.string(), z.unknown()).meta({ description: 'The item as submitted' }),
  traceparent: z.string().optional().meta({
    description:
      "The W3C traceparent of the job's submission (when it was traced): link it from the worker's own span of the item (the messaging conventions' process span)",
  }),
});

export const leaseView = z
  .object({
    leaseId: z.string(),
    processor: z.string(),
    expiresAt: z.string().meta({ description: 'Complete (or extend) before then; after it, the items come back in another lease' }),
    leaseSeconds: z.number().int().meta({
      description:
        "Seconds from the grant to expiresAt, rounded: the processor's leaseSeconds, less the time preparing the lease took after the queue's receive started it",
    }),
    items: z.array(leasedItem),
    traceparent: z.string().optional().meta({
      description:
        "The W3C traceparent of the lease's span (tallyho.job.lease, a receive linked to each item's submission; absent without tracing): the parent of the worker's own spans of the batch",
    }),
    links: z.object({ extend: z.string(), complete: z.string() }),
  })
  .meta({ id: 'Lease' });

export const leaseParams = z.strictObject({ leaseId: z.string().regex(leaseIdPattern, 'Not a lease id') });

export const extendView = z
  .object({ leaseId: z.string().meta({ description: 'Use this id from now on; the old one is spent' }), expiresAt: z.string() })
  .meta({ id: 'LeaseExtension' });

export const completionView = z
  .object({
    recorded: z.number().int().meta({ description: 'Results recorded now' }),
    alreadyFinal: z.number().int().meta({ description: 'Items that already had a final result' }),
    retrying: z.number().int().meta({ description: 'Items that come back in a later lease' }),
    jobFinished: z.boolean(),
  })
  .meta({ id: 'LeaseCompletionResult' });
