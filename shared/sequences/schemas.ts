/** The HTTP shapes of the sequences API (request validation and the OpenAPI document). */
import * as z from 'zod';

import { pageOf } from '../http/paging';
import { resourceName } from '../http/schemas';
import { definitionFields } from './definition';

const maxCountPerRequest = 1000;

export const sequenceParams = z.object({ name: resourceName });

/**
 * A typed-in number is checked by the handler, which answers `valid: false` with a reason for
 * anything malformed; only what is unsafe to echo back or log (control characters, or more than
 * 100 characters) is refused with a 400.
 */
export const formattedParam = z
  .string()
  .min(1)
  .max(100)
  .refine((s) => ![...s].some((c) => c.charCodeAt(0) < 0x20 || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) <= 0x9f)), {
    message: 'Must not contain control characters',
  })
  .meta({ example: 'ORD-0012345-9' });

export const validateParams = z.object({ name: resourceName, formatted: formattedParam });

export const nextBody = z
  .strictObject({
    count: z
      .int()
      .min(1)
      .max(maxCountPerRequest)
      .optional()
      .meta({ description: `How many numbers to take, 1-${maxCountPerRequest} (default 1).` }),
  })
  .optional()
  .meta({ id: 'SequenceNextRequest', example: { count: 3 } });

const settingsSchema = z
  .object({
    start: definitionFields.start,
    prefix: definitionFields.prefix,
    width: definitionFields.width,
    checkDigit: definitionFields.checkDigit,
    blockSize: z.object({ min: definitionFields.blockSize, max: definitionFields.blockSize }),
    refillTargetSeconds: definitionFields.refillTargetSeconds,
  })
  .meta({ id: 'SequenceSettings', description: 'The settings of a sequence, defaults filled in.' });

const instanceStats = z
  .object({
    blockSize: z.int().meta({ description: 'Size of the newest block this instance reserved.' }),
    remaining: z.int().meta({ description: 'Numbers this instance holds and has not issued.' }),
    issued: z.int(),
    refills: z.int(),
    refillInFlight: z.boolean(),
    refillFailures: z.int(),
    retries412: z.int().meta({ description: 'Conditional writes that lost to another instance and were retried.' }),
    retriesExhausted: z.int().meta({ description: 'Refills that gave up under contention (each a 503).' }),
    recoveredWrites: z.int().meta({ description: 'Writes whose response was lost but which were recognised as ours.' }),
    boundaryWaits: z.int().meta({ description: 'Requests that had to wait for a refill.' }),
    longestBoundaryWaitMs: z.number(),
    lastRefillAt: z.string().nullable(),
    closed: z.boolean(),
  })
  .meta({ id: 'SequenceInstanceStats', description: "This instance's allocator for the sequence." });

export const sequenceView = z
  .object({
    sequence: resourceName,
    settings: settingsSchema,
    highWaterMark: z.int().meta({ description: 'The first number no instance has reserved yet.' }),
    instance: instanceStats.nullable().meta({ description: 'Null until this instance issues from the sequence.' }),
  })
  .meta({ id: 'Sequence' });

export const sequenceList = pageOf(
  sequenceView,
  'SequenceList',
  'Sequences in name order; `instance` is the allocator of the instance that answered.',
  { unreadable: true },
);

export const nextResult = z
  .object({
    sequence: resourceName,
    numbers: z.array(z.int()),
    formatted: z.array(z.string()),
  })
  .meta({
    id: 'SequenceNumbers',
    example: { sequence: 'orders', numbers: [12345, 12346], formatted: ['ORD-0012345-9', 'ORD-0012346-8'] },
  });

export const validationResult = z
  .object({
    valid: z.boolean(),
    reason: z.string().optional().meta({ description: 'Why the number is not valid.' }),
    number: z.int().optional().meta({ description: 'The number, when valid.' }),
  })
  .meta({ id: 'SequenceValidation' });
