/**
 * The one validation of an effect before anything that fires it is stored: what depends on this
 * deployment (allow-lists, configured services, available capabilities) rather than on the shape
 * the schemas check. Issues are reported like the schemas report theirs, one per offending field,
 * under the path the caller's body holds the effect at (`body.target`, `body.action`).
 */
import { isIP } from 'node:net';

import { AppError, type FieldIssue, isAppError } from '../errors';
import type { Effect, JobItem } from './effect';
import { queueTargetIssue, type QueueRules, serviceBusTargetIssue } from './rules';
import { isPublicAddress } from './webhook/addresses';
import { urlRejection } from './webhook/allowList';
import type { WebhookOptions } from './webhook/call';

export interface EffectRules {
  readonly queues: QueueRules;
  /** TALLYHO_SCHEDULES_ALLOWED_SERVICEBUS_ENTITIES. */
  readonly serviceBusEntities: readonly string[];
  readonly serviceBusConfigured: boolean;
  readonly webhook: Pick<WebhookOptions, 'allowed' | 'allowPrivateAddresses'>;
  readonly gatesAvailable: boolean;
  /** The jobs capability's submission checks (its 400/413 for what POST /api/jobs would refuse); undefined without jobs. */
  readonly jobs: { check(request: { processor: string; items: readonly JobItem[] }): Promise<void> } | undefined;
}

/** Why an effect cannot run, when a capability or service is missing. */
export const unavailable = {
  gates: 'gates capability not available',
  jobs: 'jobs capability not available',
  serviceBus: 'Service Bus is not configured (ServiceBusConnection)',
} as const;

/** Why a webhook URL may not be called, by what the URL itself tells (allow-list, literal addresses); undefined when it may. */
export function webhookIssue(raw: string, rules: EffectRules['webhook']): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'Not a URL';
  }
  const rejection = urlRejection(url, rules.allowed, rules.allowPrivateAddresses);
  if (rejection !== undefined) return rejection;
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) !== 0 && !rules.allowPrivateAddresses && !isPublicAddress(literal)) return `${literal} is not a public address`;
  return undefined;
}

/** The jobs API's checks, their issues moved under `at` (`body.items.3` → `body.target.items.3`). */
async function checkJob(jobs: NonNullable<EffectRules['jobs']>, effect: Extract<Effect, { type: 'job' }>, at: string): Promise<void> {
  try {
    await jobs.check({ processor: effect.processor, items: effect.items });
  } catch (err) {
    if (!isAppError(err)) throw err;
    const issues = err.issues.map((issue) => ({ ...issue, path: issue.path.replace(/^body\./, `${at}.`) }));
    throw new AppError(err.code, err.message, { cause: err, issues, extra: err.extra });
  }
}

/**
 * The issues of `effect` under `at`. A job is checked by the jobs capability itself, whose refusal
 * (400, or 413 for too many or too large items) is thrown as it is, with its paths under `at`.
 */
export async function effectIssues(effect: Effect, rules: EffectRules, at: string): Promise<FieldIssue[]> {
  const issue = (field: string, message: string | undefined): FieldIssue[] =>
    message === undefined ? [] : [{ path: `${at}.${field}`, message }];
  switch (effect.type) {
    case 'webhook':
      return issue('url', webhookIssue(effect.url, rules.webhook));
    case 'enqueue':
      return issue('queue', queueTargetIssue(effect.queue, rules.queues));
    case 'serviceBus':
      return [
        ...issue('type', rules.serviceBusConfigured ? undefined : unavailable.serviceBus),
        ...issue('entity', serviceBusTargetIssue(effect.entity, rules.serviceBusEntities)),
      ];
    case 'gateRelease':
      return issue('type', rules.gatesAvailable ? undefined : unavailable.gates);
    case 'job':
      if (rules.jobs === undefined) return issue('type', unavailable.jobs);
      await checkJob(rules.jobs, effect, at);
      return [];
  }
}
