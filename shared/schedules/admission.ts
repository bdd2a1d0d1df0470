/**
 * Checks of a definition that depend on this deployment (settings, configured services, available
 * capabilities) or on the clock. They run after the schema and before anything is written, and
 * report like the schema does: a 400 with one issue per offending field.
 */
import { isIP } from 'node:net';

import type { ScheduleSettings } from '../config';
import { type FieldIssue, validationError } from '../errors';
import type { ScheduleDefinition } from './definition';
import { queueTargetIssue, serviceBusTargetIssue } from './targetRules';
import { unavailable } from './targets';
import { nextFireAfter } from './timing';
import { isPublicAddress } from './webhook/addresses';
import { parseAllowList, urlRejection } from './webhook/allowList';

export interface AdmissionContext {
  readonly settings: ScheduleSettings;
  readonly serviceBusConfigured: boolean;
  readonly gatesAvailable: boolean;
  readonly jobsAvailable: boolean;
  /** TALLYHO_JOBS_QUEUE_PREFIX: its work queues are never a target. */
  readonly jobsQueuePrefix: string;
  readonly now: Date;
}

function webhookIssue(raw: string, settings: ScheduleSettings): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'Not a URL';
  }
  const rejection = urlRejection(url, parseAllowList(settings.webhookAllowedHosts));
  if (rejection !== undefined) return rejection;
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) !== 0 && !settings.webhookAllowPrivateAddresses && !isPublicAddress(literal))
    return `${literal} is not a public address`;
  return undefined;
}

export function admissionIssues(definition: ScheduleDefinition, ctx: AdmissionContext): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const { timing, target } = definition;
  if (timing.kind === 'cron' && nextFireAfter(timing, ctx.now) === undefined) {
    issues.push({ path: 'body.cron', message: 'This cron never fires again' });
  }
  switch (target.type) {
    case 'webhook': {
      const issue = webhookIssue(target.url, ctx.settings);
      if (issue !== undefined) issues.push({ path: 'body.target.url', message: issue });
      break;
    }
    case 'queueMessage': {
      const issue = queueTargetIssue(target.queue, { allowed: ctx.settings.allowedQueues, jobsQueuePrefix: ctx.jobsQueuePrefix });
      if (issue !== undefined) issues.push({ path: 'body.target.queue', message: issue });
      break;
    }
    case 'serviceBus': {
      if (!ctx.serviceBusConfigured) issues.push({ path: 'body.target.type', message: unavailable.serviceBus });
      const issue = serviceBusTargetIssue(target.entity, ctx.settings.allowedServiceBusEntities);
      if (issue !== undefined) issues.push({ path: 'body.target.entity', message: issue });
      break;
    }
    case 'gateRelease':
      if (!ctx.gatesAvailable) issues.push({ path: 'body.target.type', message: unavailable.gates });
      break;
    case 'job':
      if (!ctx.jobsAvailable) issues.push({ path: 'body.target.type', message: unavailable.jobs });
      break;
  }
  return issues;
}

export function admit(definition: ScheduleDefinition, ctx: AdmissionContext): void {
  const issues = admissionIssues(definition, ctx);
  if (issues.length > 0) throw validationError('The schedule cannot be created here', issues);
}
