/** Request and response schemas of the processor and lease API (validation and the OpenAPI document). */
import { z } from 'zod';

import { itemId } from './ids';
import { leaseIdPattern } from './leaseId';
import { processorName } from './processorDefinition';

const retry = z
  .strictObject({
    delaySeconds: z.number().int().min(0).max(3600).default(10).meta({ description: "Delay before an item's second attempt" }),
    multiplier: z.number().min(1).max(10).default(2).meta({ description: 'Each later delay is the previous one times this' }),
    maxDelaySeconds: z.number().int().min(0).max(86_400).default(3600),
  })
  .meta({ id: 'ProcessorRetry', description: 'Back-off of an item that comes back (retry, not in a completion, lease ran out)' });

const common = {
  batchSize: z.number().int().min(1).max(100).default(25).meta({ description: 'Items per batch (one lease or one push), 1-100' }),
  maxAttempts: z.number().int().min(1).max(20).default(3).meta({ description: 'Attempts per item before it fails with its reason' }),
  retry: retry.default({ delaySeconds: 10, multiplier: 2, maxDelaySeconds: 3600 }),
  itemSchema: z
    .record(z.string(), z.unknown())
    .nullable()
    .default(null)
    .meta({ description: 'A JSON Schema (2020-12) every item must satisfy at submit; a bad item is a 400 naming the item and field' }),
};

export const declareBody = z
  .discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('external').meta({ description: 'Workers lease batches over HTTP' }),
      ...common,
      leaseSeconds: z.number().int().min(5).max(3600).default(60).meta({ description: 'How long a lease lasts unless extended' }),
    }),
    z.strictObject({
      type: z.literal('webhook').meta({ description: 'The app POSTs batches to `url`, signed per the Standard Webhooks specification' }),
      ...common,
      url: z
        .string()
        .max(2000)
        .meta({ description: 'An https URL on TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS, checked like a webhook schedule target' }),
      timeoutSeconds: z.number().int().min(1).max(120).default(30).meta({ description: 'How long the app waits for an answer' }),
      concurrency: z
        .number()
        .int()
        .min(1)
        .max(64)
        .default(4)
        .meta({ description: 'Batches in flight to the endpoint at once, across the app' }),
    }),
  ])
  .meta({
    id: 'ProcessorDeclaration',
    example: { type: 'external', batchSize: 50, leaseSeconds: 60, maxAttempts: 3, itemSchema: { type: 'object', required: ['url'] } },
  });

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
});

export const leaseView = z
  .object({
    leaseId: z.string(),
    processor: z.string(),
    expiresAt: z.string().meta({ description: 'Complete (or extend) before then; after it, the items come back in another lease' }),
    leaseSeconds: z.number().int(),
    items: z.array(leasedItem),
    links: z.object({ extend: z.string(), complete: z.string() }),
  })
  .meta({ id: 'Lease' });

export const leaseParams = z.strictObject({ leaseId: z.string().regex(leaseIdPattern, 'Not a lease id') });

export const extendView = z
  .object({ leaseId: z.string().meta({ description: 'Use this id from now on; the old one is spent' }), expiresAt: z.string() })
  .meta({ id: 'LeaseExtension' });

const verdict = z.discriminatedUnion('status', [
  z.strictObject({
    id: itemId,
    status: z.literal('succeeded'),
    output: z.json().optional().meta({ description: "The item's output (up to 30,000 characters of JSON)" }),
  }),
  z.strictObject({
    id: itemId,
    status: z.literal('failed'),
    code: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9_.:-]+$/, 'Use letters, digits, "_", ".", ":" or "-"'),
    reason: z.string().min(1).max(1000),
  }),
  z.strictObject({ id: itemId, status: z.literal('retry'), reason: z.string().min(1).max(1000) }),
]);

export const completionBody = z
  .strictObject({
    results: z
      .array(verdict)
      .max(100)
      .meta({ description: 'One per item of the lease; an item not mentioned comes back later, counted as an attempt' }),
  })
  .meta({
    id: 'LeaseCompletion',
    example: {
      results: [
        { id: 'img-1', status: 'succeeded', output: { thumbnail: 'thumbs/img-1.webp' } },
        { id: 'img-2', status: 'failed', code: 'notAnImage', reason: 'The file is a PDF' },
        { id: 'img-3', status: 'retry', reason: 'Upstream timed out' },
      ],
    },
  });

export const completionView = z
  .object({
    recorded: z.number().int().meta({ description: 'Results recorded now' }),
    alreadyFinal: z.number().int().meta({ description: 'Items that already had a final result' }),
    retrying: z.number().int().meta({ description: 'Items that come back in a later lease' }),
    jobFinished: z.boolean(),
  })
  .meta({ id: 'LeaseCompletionResult' });
