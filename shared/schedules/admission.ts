/**
 * Checks of a definition that depend on this deployment or on the clock. They run after the schema
 * and before anything is written, and report like the schema does: a 400 with one issue per
 * offending field. The target's are the effects' one validation (shared/effects/admission.ts).
 */
import { type FieldIssue, validationError } from '../errors';
import { effectIssues, type EffectRules } from '../effects/admission';
import type { ScheduleDefinition } from './definition';
import { targetEffect } from './targets';
import { structuralGapSeconds } from './cronStructure';
import { nextFireAfter, shortestGap } from './timing';

async function admissionIssues(definition: ScheduleDefinition, rules: EffectRules, now: Date): Promise<FieldIssue[]> {
  const issues: FieldIssue[] = [];
  const { timing, target } = definition;
  if (timing.kind === 'cron' && nextFireAfter(timing, now) === undefined) {
    issues.push({ path: 'body.cron', message: 'This cron never fires again' });
  }
  return [...issues, ...(await effectIssues(targetEffect(target), rules, 'body.target'))];
}

/**
 * A function-level caller's cron may fire no more often than the floor (TALLYHO_SCHEDULES_MIN_CRON_INTERVAL_SECONDS):
 * each fire is an orchestration step, a history write and a target run the app pays for.
 */
function cadenceIssues(definition: ScheduleDefinition, minIntervalSeconds: number | undefined, now: Date): FieldIssue[] {
  const { timing } = definition;
  if (minIntervalSeconds === undefined || timing.kind !== 'cron') return [];
  const floorMs = minIntervalSeconds * 1000;
  // The fields' structure first, whatever the date; the calendar walk for what it cannot read.
  const structural = structuralGapSeconds(timing.cron);
  const gap = structural !== undefined && structural * 1000 < floorMs ? structural * 1000 : shortestGap(timing, now, floorMs);
  if (gap === undefined || gap >= floorMs) return [];
  return [
    {
      path: 'body.cron',
      message: `Fires ${gap / 1000} s apart at times; a schedule created with a function key may fire at most every ${minIntervalSeconds} s (TALLYHO_SCHEDULES_MIN_CRON_INTERVAL_SECONDS)`,
    },
  ];
}

/** Refuses (400) what this deployment cannot run; `minCronIntervalSeconds` is the floor for the caller's level (none for admins). */
export async function admit(definition: ScheduleDefinition, rules: EffectRules, now: Date, minCronIntervalSeconds?: number): Promise<void> {
  const issues = [...(await admissionIssues(definition, rules, now)), ...cadenceIssues(definition, minCronIntervalSeconds, now)];
  if (issues.length > 0) throw validationError('The schedule cannot be created here', issues);
}
