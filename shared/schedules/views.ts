/** The schedules API's response shapes (documented in the OpenAPI document) and how a row becomes one. */
import * as z from 'zod';

import type { ReaderLevel } from '../http/authorization';
import { acceptedSchema } from '../http/operation';
import { pageOf } from '../http/paging';
import { creatorSchema } from './creator';
import { definitionView } from './definition';
import type { RunRecord } from './records';
import type { ScheduleRow } from './scheduleTable';
import { callerReason } from '../webhookFailure';

export const scheduleStates = ['pending', 'active', 'paused', 'cancelled', 'completed'] as const;

const runRecordSchema = z
  .object({
    runId: z.string().optional(),
    at: z.string().meta({ description: 'When the fire was due (a trigger: when it was requested).' }),
    kind: z.enum(['scheduled', 'catchUp', 'trigger']),
    outcome: z.enum(['running', 'succeeded', 'failed', 'skipped', 'missed']),
    reason: z.string().optional().meta({ description: 'Why it was skipped, missed or failed.' }),
    count: z.number().int().optional().meta({ description: 'Fires this line stands for (skips and misses are summarised).' }),
    triggerId: z.string().optional(),
    startedAt: z.string().optional(),
    finishedAt: z.string().optional(),
    detail: z.string().optional().meta({ description: 'What the target answered.' }),
  })
  .meta({ id: 'ScheduleRun' });

export const scheduleView = z
  .object({
    id: z.string(),
    state: z.enum(scheduleStates),
    nextFireAt: z.string().nullable(),
    at: z.string().optional(),
    cron: z.string().optional(),
    timeZone: z.string().optional(),
    target: z.record(z.string(), z.unknown()).meta({
      description:
        'What runs. Read at function level, a schedule an admin created shows only `{ type, redacted: true }` (read it with the admin key: GET /api/schedules/{id}/privileged).',
    }),
    overlap: z.enum(['skip', 'bufferOne', 'allow']),
    catchUp: z.object({ policy: z.enum(['none', 'once', 'all']), limit: z.number().int().optional() }),
    createdAt: z.string(),
    createdBy: creatorSchema.nullable().meta({ description: 'Who created it and through which key level (null: not recorded).' }),
    updatedAt: z.string(),
    runCount: z.number().int(),
    runs: z.array(runRecordSchema).meta({ description: 'The newest runs, newest last.' }),
    pendingTriggers: z.number().int(),
    delivery: z
      .object({ mode: z.literal('serviceBusScheduled'), sequenceNumber: z.string().nullable() })
      .optional()
      .meta({ description: 'Service Bus scheduled mode: the scheduled message and its sequence number (a 64-bit integer as a string).' }),
  })
  .meta({ id: 'Schedule' });

export type ScheduleView = z.output<typeof scheduleView>;

export const scheduleList = pageOf(scheduleView, 'ScheduleList', 'A page of schedules, in id order.');

export const triggerAccepted = acceptedSchema(z.object({ triggerId: z.string(), schedule: scheduleView }), 'ScheduleTrigger');

/**
 * The key level of the route a view is read through (the host enforced it). Ownership: a
 * function-level reader sees a schedule whole only when it was created at function level; of one an
 * admin created (or whose creator was not recorded) it sees when and how it runs, but not its target
 * (an admin's queue message or webhook payload may carry what only admins hold) nor why its runs
 * failed. And no function-level reader sees what a webhook answered: the allow-listed endpoint is the
 * operator's, and its error pages are not the caller's to read.
 */
export type Reader = ReaderLevel;

/** A failed webhook run's reason is `HTTP <status>: <what it answered>`; the status alone for function-level readers. */
function withoutAnswer(run: RunRecord): RunRecord {
  return run.reason === undefined ? run : { ...run, reason: callerReason(run.reason) };
}

function withoutOutcomeText(run: RunRecord): RunRecord {
  const { detail: _detail, ...rest } = run;
  return run.outcome === 'failed' ? { ...rest, reason: 'failed (the reason is shown with the admin key)' } : rest;
}

function runsFor(row: ScheduleRow, reader: Reader, owned: boolean): RunRecord[] {
  if (reader === 'admin') return [...row.runs];
  if (!owned) return row.runs.map(withoutOutcomeText);
  return row.definition.target.type === 'webhook' ? row.runs.map(withoutAnswer) : [...row.runs];
}

export function viewOf(row: ScheduleRow, reader: Reader): ScheduleView {
  const owned = reader === 'admin' || row.createdBy?.level === 'function';
  const whole = definitionView(row.definition) as Pick<ScheduleView, 'at' | 'cron' | 'timeZone' | 'target' | 'overlap' | 'catchUp'>;
  const definition = owned ? whole : { ...whole, target: { type: row.definition.target.type, redacted: true } };
  return {
    id: row.id,
    state: row.state,
    nextFireAt: row.nextFireAt ?? null,
    ...definition,
    createdAt: row.createdAt,
    createdBy: row.createdBy ?? null,
    updatedAt: row.updatedAt,
    runCount: row.runCount,
    runs: runsFor(row, reader, owned),
    pendingTriggers: row.triggers.length,
    ...(row.mode === 'serviceBusScheduled'
      ? { delivery: { mode: 'serviceBusScheduled' as const, sequenceNumber: row.sequenceNumber ?? null } }
      : {}),
  };
}

export const scheduleFigures = z
  .object({
    readAt: z.string().meta({ description: 'When the index was read (the server clock)' }),
    schedules: z.number().int().meta({ description: 'Schedules read (one page of the index, at most 200)' }),
    worstLatenessSeconds: z.number().meta({
      description: "The largest lateness among the schedules' latest runs: from when a fire was due to its run starting (0: none late)",
    }),
    latestRuns: z
      .array(z.object({ id: z.string(), due: z.string(), startedAt: z.string(), latenessSeconds: z.number() }))
      .meta({ description: "Each schedule's latest scheduled or catch-up run, the latest ones first (at most 10)" }),
    overdue: z
      .array(z.object({ id: z.string(), nextFireAt: z.string() }))
      .meta({ description: 'Active schedules whose next fire is more than a minute past due and has not run (at most 10)' }),
    truncated: z.boolean().meta({ description: 'More schedules exist than one read takes' }),
  })
  .meta({
    id: 'ScheduleFigures',
    description:
      'How late schedules run, read now from the schedule index: the lateness the tallyho.schedule.lateness histogram records, per latest run.',
  });
