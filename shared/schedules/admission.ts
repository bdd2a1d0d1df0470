/**
 * Checks of a definition that depend on this deployment or on the clock. They run after the schema
 * and before anything is written, and report like the schema does: a 400 with one issue per
 * offending field. The target's are the effects' one validation (shared/effects/admission.ts).
 */
import { type FieldIssue, validationError } from '../errors';
import { effectIssues, type EffectRules } from '../effects/admission';
import type { ScheduleDefinition } from './definition';
import { targetEffect } from './targets';
import { nextFireAfter } from './timing';

async function admissionIssues(definition: ScheduleDefinition, rules: EffectRules, now: Date): Promise<FieldIssue[]> {
  const issues: FieldIssue[] = [];
  const { timing, target } = definition;
  if (timing.kind === 'cron' && nextFireAfter(timing, now) === undefined) {
    issues.push({ path: 'body.cron', message: 'This cron never fires again' });
  }
  return [...issues, ...(await effectIssues(targetEffect(target), rules, 'body.target'))];
}

export async function admit(definition: ScheduleDefinition, rules: EffectRules, now: Date): Promise<void> {
  const issues = await admissionIssues(definition, rules, now);
  if (issues.length > 0) throw validationError('The schedule cannot be created here', issues);
}
