/** Request and response schemas of the jobs API (validation and the OpenAPI document). */
import * as z from 'zod';

import { acceptedSchema } from '../../http/operation';
import { pageOf, pageQuery } from '../../http/paging';
import { fileNamePattern, itemIdPattern, jobId } from '../envelopes/ids';

const jobItem = z
  .record(z.string(), z.unknown())
  .superRefine((item, ctx) => {
    if (typeof item.id !== 'string' || !itemIdPattern.test(item.id)) {
      ctx.addIssue({
        code: 'custom',
        path: ['id'],
        message: 'Each item needs an "id": 1-128 letters, digits, "_", ".", ":" or "-", starting with a letter or digit',
      });
    }
  })
  .transform((item) => item as { id: string } & Record<string, unknown>)
  .meta({ description: "One item; its fields are the processor's. `id` is unique within the job." });

/** An item the API examples use (jobs, and a gate's job action): a text for the word-count processor. */
export const exampleItem = { id: 'doc-1', text: 'The quick brown fox jumps over the lazy dog' } as const;

/** A processor's name: an in-app one, or one declared with `PUT /api/processors/{name}`. */
const processor = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/, 'Not a processor name')
  .meta({ description: 'What processes the items: a processor of the app, or a declared external or webhook one', example: 'wordcount' });

export const submitBody = z
  .strictObject({
    processor,
    items: z.array(jobItem).min(1).meta({ description: 'At most TALLYHO_JOBS_MAX_ITEMS items' }),
  })
  .meta({
    id: 'JobSubmission',
    example: { processor: 'wordcount', items: [exampleItem] },
  });

export const jobParams = z.strictObject({ id: jobId });

export const fileParams = z.strictObject({
  id: jobId,
  name: z.string().regex(fileNamePattern, 'Not a file name').meta({ example: 'wordcount.csv' }),
});

export const resultsQuery = pageQuery({
  status: z.enum(['succeeded', 'failed', 'cancelled', 'retrying']).optional().meta({ description: 'Only results with this status' }),
});

export const failuresQuery = pageQuery({});

const jobState = z.enum(['accepted', 'running', 'cancelling', 'completed', 'completedWithFailures', 'cancelled']);

export const jobView = z
  .object({
    id: z.string(),
    processor: z.string(),
    state: jobState.meta({
      description:
        '`accepted`: nothing processed yet; `running`; `cancelling`: cancelled, its open items being recorded; `completed`: every item ' +
        'succeeded; `completedWithFailures`; `cancelled`',
    }),
    round: z.number().int().meta({ description: '0, or the number of retry-failed runs' }),
    totals: z.object({
      items: z.number().int(),
      succeeded: z.number().int(),
      failed: z.number().int(),
      cancelled: z.number().int().meta({ description: 'Items that had no result when the job was cancelled' }),
      pending: z.number().int(),
    }),
    envelopes: z.object({ count: z.number().int(), sent: z.number().int() }).meta({ description: 'Envelopes of the current round' }),
    timings: z.object({
      acceptedAt: z.string(),
      enqueuedAt: z.string().nullable(),
      startedAt: z.string().nullable().meta({ description: 'First result recorded' }),
      lastProgressAt: z.string().nullable(),
      completedAt: z.string().nullable(),
      cancelledAt: z.string().nullable(),
      durationMs: z.number().int().nullable().meta({ description: 'Accepted to completed' }),
    }),
    summary: z.record(z.string(), z.unknown()).nullable().meta({ description: "The processor's summary, once completed" }),
    delivery: z
      .enum(['none', 'pending', 'delivered', 'notConfigured'])
      .meta({ description: "The in-app processor's hand-on of the latest completion (e.g. to a stream)" }),
    event: z
      .enum(['none', 'pending', 'published', 'notConfigured'])
      .meta({ description: 'The JobCompleted event of the latest completion' }),
    links: z.record(z.string(), z.string()),
  })
  .meta({ id: 'Job' });

export const jobAccepted = acceptedSchema(jobView, 'JobAccepted');

export const jobList = pageOf(jobView, 'JobList', 'Jobs in id order (time-ordered ids first, oldest first; `k-…` ids after).', {
  unreadable: true,
});

export const resultView = z
  .object({
    id: z.string(),
    status: z.enum(['succeeded', 'failed', 'cancelled', 'retrying']),
    output: z.unknown().optional(),
    code: z.string().optional(),
    reason: z.string().optional(),
    attempts: z.number().int(),
    envelope: z.string(),
    round: z.number().int(),
    claimCheck: z.boolean().meta({ description: 'The item travelled as a claim check (a reference into the input blob)' }),
    payloadSha256: z.string().optional().meta({ description: 'SHA-256 of the item as the worker received it' }),
    payloadBytes: z.number().int().optional(),
    recordedAt: z.string(),
  })
  .meta({ id: 'JobResult' });

export const resultsPage = pageOf(resultView, 'JobResultsPage', "A page of the job's item results, in item-id order.");

export const failureView = z
  .object({
    id: z.string(),
    code: z.string(),
    reason: z.string(),
    attempts: z.number().int(),
    envelope: z.string(),
    round: z.number().int(),
  })
  .meta({ id: 'JobFailure' });

export const failuresPage = pageOf(failureView, 'JobFailuresPage', "A page of the job's failed items, in item-id order.");

export const jobFigures = z
  .object({
    readAt: z.string().meta({ description: 'When the queues were read (the server clock)' }),
    processors: z.array(z.string()).meta({ description: 'The in-app processors; their envelopes share the work queues below' }),
    queues: z.array(
      z.object({
        queue: z.string().meta({ description: 'A work queue' }),
        messages: z.number().int().meta({ description: 'Envelopes waiting in it (the approximate count Azure Storage reports)' }),
        oldestAgeSeconds: z
          .number()
          .int()
          .meta({ description: 'Age of the oldest envelope waiting in it, since it was first queued (0: none waiting)' }),
        poisonQueue: z.string(),
        poison: z.number().int().meta({ description: 'Envelopes in its poison queue not yet recorded as failed items' }),
      }),
    ),
    total: z.object({
      messages: z.number().int(),
      poison: z.number().int(),
      oldestAgeSeconds: z.number().int().meta({ description: 'The oldest of the work queues' }),
    }),
    declared: z.array(
      z.object({
        processor: z.string(),
        type: z.enum(['external', 'webhook']),
        queue: z.string().meta({ description: "The processor's own queue" }),
        backlog: z
          .number()
          .int()
          .meta({ description: "Envelopes not yet done: waiting, leased, or waiting out a retry's back-off (the approximate count)" }),
        waiting: z.number().int().meta({ description: 'Envelopes visible at the front of the queue, ready to lease (a peek: at most 32)' }),
        waitingAtLeast: z.boolean().meta({ description: 'True when `waiting` is the peek limit (32): at least that many wait' }),
        leased: z.number().int().nullable().meta({
          description: "Envelopes held by a lease or waiting out a retry's back-off (backlog − waiting); null while 32 or more wait",
        }),
        oldestAgeSeconds: z
          .number()
          .int()
          .meta({ description: 'Age of the oldest envelope waiting, since it was first queued (0: none waiting)' }),
      }),
    ),
  })
  .meta({
    id: 'JobFigures',
    description:
      "The backlog of the in-app processors' work queues and of each declared processor's queue: the figures the tallyho.job.backlog, " +
      'tallyho.job.backlog.age, tallyho.job.poison.backlog and tallyho.job.processor.* gauges report, read now.',
  });
