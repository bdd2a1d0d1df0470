/**
 * Processors declared at run time (`PUT /api/processors/{name}`): `external` ones, whose workers
 * lease batches over HTTP, and `webhook` ones, whose endpoint the app pushes batches to. Each has
 * queues of its own (`<prefix>-x-<name>`), so one processor's backlog never starves another's.
 * Pure: the API schemas and the store share these forms.
 */
import * as z from 'zod';

import { laneName } from '../queueNames';

/** Lower-case letters, digits and single hyphens: safe in a queue name, a URL segment and a table key. */
export const processorNamePattern = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

export const processorName = z
  .string()
  .min(2)
  .max(32)
  .regex(processorNamePattern, 'Use 2-32 lower-case letters, digits and single hyphens, starting with a letter')
  .meta({ example: 'thumbnails' });

export interface RetryPolicy {
  /** Delay before an item's second attempt. */
  readonly delaySeconds: number;
  /** Each later delay is the previous one times this. */
  readonly multiplier: number;
  readonly maxDelaySeconds: number;
}

interface Common {
  readonly name: string;
  /** Items per envelope (one lease or one push carries at most this many). */
  readonly batchSize: number;
  /** How long a lease lasts (a push: how long the app waits for the endpoint, plus a margin). */
  readonly leaseSeconds: number;
  readonly maxAttempts: number;
  readonly retry: RetryPolicy;
  /** A JSON Schema every item must satisfy at submit (a 400 names the item and field); null: any object with an id. */
  readonly itemSchema: Record<string, unknown> | null;
  /** Caller ids that may work it besides holders of a worker role for it (absent in declarations made before). */
  readonly workers?: readonly string[];
  /** A job of it no worker served this long expires (../submit/expiry.ts); null or absent: TALLYHO_JOBS_IDLE_LIMIT_SECONDS. */
  readonly idleLimitSeconds?: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

interface ExternalProcessor extends Common {
  readonly type: 'external';
}

export interface WebhookProcessor extends Common {
  readonly type: 'webhook';
  readonly url: string;
  /** How long the app waits for the endpoint's answer. */
  readonly timeoutSeconds: number;
  /** Pushes to the endpoint in flight at once, across the app. */
  readonly concurrency: number;
  /** The Standard Webhooks secret (`whsec_…`), and the one it replaced, valid until `previousSecretUntil`. */
  readonly secret: string;
  readonly previousSecret: string | null;
  readonly previousSecretUntil: number | null;
}

export type DeclaredProcessor = ExternalProcessor | WebhookProcessor;

/** The bounds of an idle limit, a processor's and the setting's: a minute to 30 days. */
export const idleLimitBounds = { min: 60, max: 30 * 86_400 } as const;

/** Seconds a push's lease lasts beyond the endpoint's timeout: room to record the answer. */
export const pushLeaseMarginSeconds = 15;

/** The delay before attempt `attempt` (2 for the first retry), in whole seconds. */
export function retryDelaySeconds(policy: RetryPolicy, attempt: number): number {
  const delay = policy.delaySeconds * policy.multiplier ** Math.max(0, attempt - 2);
  return Math.round(Math.min(delay, policy.maxDelaySeconds));
}

/** The queue of a declared processor: `<prefix>-x-<name>` (the prefix is TALLYHO_JOBS_QUEUE_PREFIX). */
export function processorQueueName(prefix: string, name: string): string {
  return `${prefix}-x-${name}`;
}

/**
 * A declared processor's retry lane: `<prefix>-r-<name>`, as long as its queue (so the name limit is
 * the same). Leased batches live here from the moment they are leased, so a retry (a back-off) or a
 * lease that ran out becomes visible in a queue that lease requests read first, not behind the
 * processor's whole backlog (storage queues hand out messages in the order they became visible).
 */
export function processorLaneName(prefix: string, name: string): string {
  return laneName(prefix, name);
}

const retry = z
  .strictObject({
    delaySeconds: z.number().int().min(0).max(3600).default(10).meta({ description: "Delay before an item's second attempt" }),
    multiplier: z.number().min(1).max(10).default(2).meta({ description: 'Each later delay is the previous one times this' }),
    maxDelaySeconds: z.number().int().min(0).max(86_400).default(3600).meta({ description: 'The longest delay between two attempts' }),
  })
  .meta({ id: 'ProcessorRetry', description: 'Back-off of an item that comes back (retry, not in a completion, lease ran out)' });

/** A caller id an admin names as a worker: `cred:<name>` (a credential) or `entra:<object id>`. */
const workerId = z
  .string()
  .max(80)
  .regex(
    /^(?:cred:[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9_-])?|entra:[0-9a-f-]{36})$/,
    'Use a caller id: cred:<name> or entra:<object id>',
  );

const common = {
  workers: z
    .array(workerId)
    .max(50)
    .default([])
    .meta({ description: 'Caller ids that may lease its batches, besides callers whose roles make them its workers' }),
  idleLimitSeconds: z
    .number()
    .int()
    .min(idleLimitBounds.min)
    .max(idleLimitBounds.max)
    .nullable()
    .default(null)
    .meta({
      description:
        'A job of this processor that no worker served for this long expires: its unfinished items fail with code `expired` and it finishes. ' +
        'null: TALLYHO_JOBS_IDLE_LIMIT_SECONDS (24 h by default)',
    }),
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
      url: z.string().max(2000).meta({
        description:
          'An https URL on TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS, checked like a webhook schedule target (http to a loopback host when private addresses are allowed)',
      }),
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

/** A declaration as `PUT /api/processors/{name}` takes it (defaults applied). */
export type DeclareBody = z.output<typeof declareBody>;

/** Azure queue names hold 63 characters. */
export const maxQueueNameLength = 63;
