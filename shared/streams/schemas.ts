/** Request and response schemas of the streams API (validation and the OpenAPI document). */
import * as z from 'zod';

import { acceptedSchema } from '../http/operation';

import { pageOf } from '../http/paging';
import { resourceName } from '../http/schemas';
import { documentAcceptedInput } from '../openapi/acceptedInput';

export const eventType = resourceName.meta({ description: 'Event type', example: 'orders' });

const partitionSchema = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'Use 1-32 lower-case letters and digits, single "-" between them')
  .meta({ example: 'p03' });

const producerId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\x21-\x7e]+$/, 'Use 1-128 printable ASCII characters without spaces')
  .meta({ description: 'Who produced the event; sequence numbers are per producer and event type', example: 'checkout-7' });

export const streamEvent = z
  .strictObject({
    producer: producerId,
    seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).meta({
      description: "The producer's sequence number: increasing per producer; a number not above the last accepted one is a duplicate",
    }),
    data: z.json().optional().meta({ description: 'Any JSON value (default null)' }),
  })
  .meta({ id: 'StreamEvent', example: { producer: 'checkout-7', seq: 42, data: { order: 'ORD-0012345-9', total: 129.5 } } });

export type StreamEventInput = z.output<typeof streamEvent>;

/** A lone event is read as a batch of one, so errors always name `body.events.<i>.<field>`. */
function asBatch(body: unknown): unknown {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && !('events' in body) ? { events: [body] } : body;
}

const eventBatch = z.strictObject({ events: z.array(streamEvent).min(1) });

export const appendBody = documentAcceptedInput(
  z.preprocess(asBatch, eventBatch),
  z
    .union([streamEvent, eventBatch])
    .meta({ id: 'StreamAppendBody', description: 'One event (`{ "producer", "seq", "data" }`), or `{ "events": [ ... ] }`' }),
);

const ackMode = z.enum(['buffered', 'flushed']);
export type AckMode = z.output<typeof ackMode>;

export const appendQuery = z.strictObject({
  ack: ackMode.default('buffered').meta({
    description: "`buffered`: answer once the events are in the writer's durable state; `flushed`: once they are in the log blob",
  }),
  wait: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .meta({ description: 'When the buffer is full, wait for room (up to TALLYHO_STREAMS_MAX_WAIT_SECONDS) instead of answering 429' }),
});

export const typeParams = z.strictObject({ type: eventType });

export const appendResult = z
  .object({
    type: z.string(),
    partition: z.string(),
    resource: z.string(),
    requestId: z.string(),
    accepted: z.number().int().meta({ description: 'Events newly accepted' }),
    duplicates: z.number().int().meta({ description: 'Events ignored because the producer had sent them before' }),
    lastIndex: z.number().int().meta({ description: "Highest position in the writer's log this request covers (-1: none)" }),
    ack: ackMode,
    flushed: z.boolean().meta({ description: 'Every event of the request is in the log blob' }),
  })
  .meta({ id: 'StreamAppendResult' });

export const appendAccepted = acceptedSchema(appendResult, 'StreamAppendAccepted');

export const remapBody = z
  .strictObject({ partition: partitionSchema.optional(), resource: resourceName.optional() })
  .refine((b) => b.partition !== undefined || b.resource !== undefined, { message: 'Give a partition, a resource or both' })
  .meta({ id: 'StreamRemapBody', example: { partition: 'p07', resource: 'orders-2026' } });

const routeView = z.object({
  partition: z.string(),
  resource: z.string(),
  version: z.number().int(),
  source: z.enum(['table', 'default']),
});

export const streamRouteList = pageOf(
  routeView.extend({ type: z.string() }),
  'StreamRouteList',
  'Event types callers wrote to or an operator remapped, in type order, each with its route (`source`: `table` when remapped, `default` otherwise).',
  { unreadable: true },
);

export const remapResult = z
  .object({
    type: z.string(),
    from: routeView,
    to: routeView,
    changed: z.boolean(),
    switched: z.boolean().meta({ description: 'The new writer owns the type (the old one flushed and handed over)' }),
  })
  .meta({ id: 'StreamRemapResult' });

export const remapAccepted = acceptedSchema(remapResult, 'StreamRemapAccepted');

export const flushResult = z
  .object({
    type: z.string(),
    partition: z.string(),
    resource: z.string(),
    flushedThrough: z.number().int().meta({ description: 'Every event with a lower index is in the log' }),
    flushed: z.boolean(),
  })
  .meta({ id: 'StreamFlushResult' });

export const flushAccepted = acceptedSchema(flushResult, 'StreamFlushAccepted');

export const streamView = z
  .object({
    type: z.string(),
    route: routeView.extend({ cachedForMs: z.number().int().nullable() }),
    writer: z.object({
      key: z.string(),
      exists: z.boolean(),
      owns: z.enum(['yes', 'handingOver', 'awaitingHandoff', 'unknown']),
      accepted: z.number().int(),
      flushedThrough: z.number().int(),
      bufferDepth: z.number().int(),
      inFlight: z.number().int(),
      maxBuffered: z.number().int(),
      bufferedBytes: z.number().int(),
      maxBufferedBytes: z.number().int(),
      oldestUnflushedAt: z.string().nullable(),
      flushLagMs: z.number().int().meta({ description: 'Age of the oldest event not yet in the log (0 when none)' }),
      lastFlush: z
        .object({
          at: z.string(),
          events: z.number().int(),
          bytes: z.number().int(),
          blob: z.string().optional().meta({ description: 'Admin view only' }),
          blocksFoundWritten: z.number().int(),
        })
        .nullable(),
      lastError: z.object({ at: z.string(), message: z.string(), attempts: z.number().int() }).nullable(),
      log: z
        .object({
          container: z.string().optional().meta({ description: 'Admin view only' }),
          blob: z.string().optional().meta({ description: 'Admin view only' }),
          position: z.number().int(),
          blocks: z.number().int(),
        })
        .nullable(),
      totals: z.object({
        accepted: z.number().int(),
        duplicates: z.number().int(),
        refusedFull: z.number().int(),
        flushes: z.number().int(),
        bytes: z.number().int(),
      }),
    }),
  })
  .meta({ id: 'StreamView' });
