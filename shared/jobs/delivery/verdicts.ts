/**
 * A result per item, as a worker completes a lease and a webhook processor's endpoint answers a push
 * (`{"results": [...]}`): succeeded with its output, failed with a code and reason, or retry. What
 * a completion's results mean for its lease is ./verdictRules.ts.
 */
import * as z from 'zod';

import { itemId } from '../envelopes/ids';

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
