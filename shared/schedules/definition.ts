/**
 * What a schedule is: when it fires (a one-off `at` or a six-field cron in an IANA zone), what it
 * runs (its target) and its policies. Fixed at creation: creating the same id again with the same
 * definition is idempotent (200), with a different one a 409.
 *
 * Checks that need no settings or clock live in the zod schema, so a bad cron, time or zone is a 400
 * naming the field before anything is written; the rest (webhook allow-list, reserved queues, "the
 * cron still fires") are in `admission.ts`.
 */
import * as z from 'zod';

import type { JobItem, JsonValue } from '../effects/effect';
import { isoTimestamp, resourceName } from '../http/schemas';
import { submitBody } from '../jobs/http/schemas';
import { creatorName } from './creator';
import { canonicalTimeZone } from './timeZone';
import { compileCron, type Timing } from './timing';

export type OverlapPolicy = 'skip' | 'bufferOne' | 'allow';
export type CatchUpPolicy = { readonly policy: 'none' | 'once' } | { readonly policy: 'all'; readonly limit: number };

export type Target =
  | { readonly type: 'gateRelease'; readonly gate: string }
  | { readonly type: 'job'; readonly processor: string; readonly items: readonly JobItem[] }
  | { readonly type: 'queueMessage'; readonly queue: string; readonly message: JsonValue }
  | {
      readonly type: 'serviceBus';
      readonly entity: string;
      readonly message: JsonValue;
      readonly sessionId?: string;
      readonly delivery: 'immediate' | 'scheduled';
    }
  | { readonly type: 'webhook'; readonly url: string; readonly payload?: JsonValue };

export interface ScheduleDefinition {
  readonly timing: Timing;
  readonly target: Target;
  readonly overlap: OverlapPolicy;
  readonly catchUp: CatchUpPolicy;
}

export const limits = {
  /** The whole definition is stored in one table property (64 KiB) and in the orchestration input. */
  bodyBytes: 32 * 1024,
  jobItems: 1000,
  catchUpAllMax: 100,
  catchUpAllDefault: 10,
  cronLength: 200,
} as const;

/** Earliest and latest `at` accepted: keeps dates inside what every store and SDK handles. */
const earliestAt = Date.UTC(2000, 0, 1);
const latestAt = Date.UTC(9999, 11, 31);

const queueName = z
  .string()
  .regex(/^(?!.*--)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/, 'A storage queue name: 3-63 lowercase letters, digits and single hyphens');

const serviceBusEntity = z
  .string()
  .regex(/^[A-Za-z0-9]([A-Za-z0-9._/-]{0,258}[A-Za-z0-9])?$/, 'A Service Bus queue or topic name: letters, digits, ".", "_", "-", "/"');

const targetSchema = z
  .discriminatedUnion('type', [
    z
      .strictObject({ type: z.literal('gateRelease'), gate: resourceName })
      .meta({ description: 'Release a gate (idempotent: releasing a released gate changes nothing).' }),
    z
      .strictObject({
        type: z.literal('job'),
        processor: submitBody.shape.processor,
        items: submitBody.shape.items.max(limits.jobItems),
      })
      .meta({ description: 'Submit a job (the jobs API body); the run lasts until the job has finished.' }),
    z.strictObject({ type: z.literal('queueMessage'), queue: queueName, message: z.json() }).meta({
      description: 'Put `message` on a storage queue of this app (base64-encoded, as Functions queue triggers expect).',
    }),
    z.strictObject({
      type: z.literal('serviceBus'),
      entity: serviceBusEntity,
      message: z.json(),
      sessionId: z.string().min(1).max(128).optional(),
      delivery: z.enum(['immediate', 'scheduled']).optional(),
    }),
    z.strictObject({
      type: z.literal('webhook'),
      url: z.string().max(2048),
      payload: z.json().optional(),
    }),
  ])
  .meta({ id: 'ScheduleTarget', description: 'What runs when the schedule fires.' });

const catchUpSchema = z
  .union([
    z.enum(['none', 'once', 'all']),
    z.strictObject({
      policy: z.enum(['none', 'once', 'all']),
      limit: z.int().min(1).max(limits.catchUpAllMax).optional(),
    }),
  ])
  .meta({
    description:
      'Fires missed while the app was down: `none` skips them, `once` (default) runs one, `all` runs each, at most `limit` (default 10).',
  });

export const createScheduleBody = z
  .strictObject({
    id: resourceName.optional().meta({ description: 'Your id for the schedule (generated when omitted). Never reused.' }),
    at: isoTimestamp.optional().meta({ description: 'Fire once at this time (with an offset).', example: '2027-01-15T09:00:00Z' }),
    cron: z
      .string()
      .max(limits.cronLength)
      .optional()
      .meta({ description: 'Fire on this six-field cron (second minute hour day month weekday).', example: '0 0 9 * * MON-FRI' }),
    timeZone: z
      .string()
      .max(64)
      .optional()
      .meta({ description: 'IANA zone the cron is read in (default UTC).', example: 'America/New_York' }),
    target: targetSchema,
    overlap: z
      .enum(['skip', 'bufferOne', 'allow'])
      .optional()
      .meta({ description: 'A fire while a run is in progress: skipped (default), held (one at most) or run alongside.' }),
    catchUp: catchUpSchema.optional(),
    by: creatorName.optional(),
  })
  .superRefine((body, ctx) => {
    const issue = (path: string, message: string): void => ctx.addIssue({ code: 'custom', path: [path], message });
    if ((body.at === undefined) === (body.cron === undefined)) issue('at', 'Give exactly one of `at` (a one-off) or `cron` (a recurrence)');
    if (body.at !== undefined) {
      const at = Date.parse(body.at);
      if (!(at >= earliestAt && at <= latestAt)) issue('at', 'Must be between 2000-01-01 and 9999-12-31');
      if (body.timeZone !== undefined) issue('timeZone', 'Applies to `cron` only; give `at` with its UTC offset');
    }
    const zone = body.timeZone ?? 'UTC';
    const canonical = canonicalTimeZone(zone);
    if (canonical === undefined) issue('timeZone', `"${zone}" is not an IANA time zone (e.g. America/New_York)`);
    if (body.cron !== undefined && canonical !== undefined) {
      if (body.cron.trim().split(/\s+/).length !== 6) {
        issue('cron', 'Use six fields: second minute hour day-of-month month day-of-week');
      } else {
        try {
          compileCron(body.cron.trim(), canonical);
        } catch (err) {
          issue('cron', err instanceof Error ? err.message : 'Not a valid cron expression');
        }
      }
    }
    const catchUp = body.catchUp;
    if (typeof catchUp === 'object' && catchUp.limit !== undefined && catchUp.policy !== 'all') {
      ctx.addIssue({ code: 'custom', path: ['catchUp', 'limit'], message: 'Applies to the `all` policy only' });
    }
    const target = body.target;
    if (target.type === 'serviceBus' && target.delivery === 'scheduled' && body.at === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['target', 'delivery'],
        message: 'Scheduled delivery hands one message to Service Bus; it needs `at`, not `cron`',
      });
    }
    if (target.type === 'serviceBus' && target.delivery === 'scheduled' && body.overlap !== undefined) {
      issue('overlap', 'Scheduled delivery has no runs of its own to overlap');
    }
  })
  .meta({
    id: 'CreateSchedule',
    example: {
      id: 'nightly-report',
      cron: '0 30 2 * * *',
      timeZone: 'America/New_York',
      target: { type: 'queueMessage', queue: 'reports', message: { kind: 'nightly' } },
    },
  });

export type CreateScheduleBody = z.output<typeof createScheduleBody>;

function catchUpOf(input: CreateScheduleBody['catchUp']): CatchUpPolicy {
  if (input === undefined) return { policy: 'once' };
  const policy = typeof input === 'string' ? input : input.policy;
  if (policy !== 'all') return { policy };
  return { policy, limit: (typeof input === 'object' ? input.limit : undefined) ?? limits.catchUpAllDefault };
}

function targetOf(input: CreateScheduleBody['target']): Target {
  if (input.type === 'serviceBus') {
    return {
      type: 'serviceBus',
      entity: input.entity,
      message: input.message,
      ...(input.sessionId === undefined ? {} : { sessionId: input.sessionId }),
      delivery: input.delivery ?? 'immediate',
    };
  }
  if (input.type === 'webhook')
    return { type: 'webhook', url: input.url, ...(input.payload === undefined ? {} : { payload: input.payload }) };
  return input;
}

/** The definition a (schema-valid) request asks for, with defaults filled in and `at` in UTC. */
export function definitionOf(body: CreateScheduleBody): ScheduleDefinition {
  const timing: Timing =
    body.at !== undefined
      ? { kind: 'once', at: new Date(body.at).toISOString() }
      : { kind: 'cron', cron: (body.cron ?? '').trim().split(/\s+/).join(' '), timeZone: body.timeZone ?? 'UTC' };
  return { timing, target: targetOf(body.target), overlap: body.overlap ?? 'skip', catchUp: catchUpOf(body.catchUp) };
}

function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** A key equal for equal definitions: key order and time-zone spelling (`US/Eastern`) do not count. */
export function definitionKey(definition: ScheduleDefinition): string {
  const timing =
    definition.timing.kind === 'cron'
      ? { ...definition.timing, timeZone: canonicalTimeZone(definition.timing.timeZone) ?? definition.timing.timeZone }
      : definition.timing;
  return sortedJson({ ...definition, timing });
}

/** The request shape of a definition (for responses): `at` or `cron` + `timeZone`, the target, the policies. */
export function definitionView(definition: ScheduleDefinition): Record<string, unknown> {
  const timing =
    definition.timing.kind === 'once'
      ? { at: definition.timing.at }
      : { cron: definition.timing.cron, timeZone: definition.timing.timeZone };
  return { ...timing, target: definition.target, overlap: definition.overlap, catchUp: definition.catchUp };
}
