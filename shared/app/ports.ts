/**
 * The capabilities' use-cases as the ports other capabilities take them through. A capability
 * declares the port it needs (shared/effects' GateReleasePort and JobPort); the composition root
 * adapts the owner's service to it, so neither capability imports the other.
 */
import { callWebhook, effectIssues, type EffectRules, type GateReleasePort, type JobPort, parseAllowList, webhookIssue } from '../effects';
import { validationError } from '../errors';
import type { GateAction, GateCommands } from '../gates';
import { isFinished, type Jobs, type PushTransport } from '../jobs';
import type { AppConfig } from './settings';

/** Which webhooks may be called: the allow-list (TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS) and private addresses. */
export function webhookRulesOf(config: Pick<AppConfig, 'schedules'>): EffectRules['webhook'] {
  const s = config.schedules;
  return { allowed: parseAllowList(s.webhookAllowedHosts), allowPrivateAddresses: s.webhookAllowPrivateAddresses };
}

/**
 * What an effect may do in this deployment: the allow-lists (TALLYHO_SCHEDULES_*: schedules are
 * where callers choose queues, entities and URLs), the configured services and the capabilities.
 */
export function effectRulesOf(
  config: Pick<AppConfig, 'schedules' | 'jobs'>,
  available: { readonly serviceBus: boolean; readonly jobs: EffectRules['jobs']; readonly webhook?: EffectRules['webhook'] },
): EffectRules {
  const s = config.schedules;
  return {
    queues: { allowed: s.allowedQueues, jobsQueuePrefix: config.jobs.queuePrefix },
    serviceBusEntities: s.allowedServiceBusEntities,
    serviceBusConfigured: available.serviceBus,
    webhook: available.webhook ?? webhookRulesOf(config),
    gatesAvailable: true,
    jobs: available.jobs,
  };
}

/** The gates capability's release. */
export function gateReleasePort(service: GateCommands): GateReleasePort {
  return {
    async release(gate, by, note) {
      return (await service.release(gate, { by, note })).outcome;
    },
  };
}

/**
 * The jobs capability's submit and status use-cases. The key is the effect's (`effectKey`), so a
 * retried run finds the job it submitted instead of submitting another.
 */
export function jobPort(jobs: Jobs): JobPort {
  return {
    async submit(processor, items, key, owner) {
      // The app's own key space: no caller's Idempotency-Key can name (and so squat) this job. The
      // job is the schedule's or gated run's owner's.
      const { job } = await jobs.submissions.submit({ processor, items }, key, {
        keySpace: 'app',
        ...(owner === undefined ? {} : { owner }),
      });
      return job.id;
    },
    async status(handle) {
      const job = await jobs.reads.job(handle);
      if (!isFinished(job.phase)) return { state: 'running' };
      if (job.phase === 'cancelled') return { state: 'failed', reason: `job ${job.id} was cancelled` };
      const counts = `${job.succeeded ?? 0} succeeded, ${job.failed ?? 0} failed`;
      return job.phase === 'completed'
        ? { state: 'succeeded', detail: `job ${job.id} completed (${counts})` }
        : { state: 'failed', reason: `job ${job.id} completed with failures (${counts})` };
    },
  };
}

/** Largest answer read from a webhook processor's endpoint: a results document for a batch of up to 100 items. */
const pushMaxResponseBytes = 4 * 1024 * 1024;

/**
 * How webhook processors' batches are sent: the same allow-list, address guard (DNS pinned, private
 * addresses refused unless allowed), redirect checks and deadline as webhook schedule targets.
 */
export function pushTransport(rules: EffectRules['webhook'], maxRedirects: number): PushTransport {
  return {
    urlIssue: (url) => webhookIssue(url, rules),
    async post(url, body, headers, timeoutMs) {
      const response = await callWebhook(
        url,
        undefined,
        { ...rules, timeoutMs, maxResponseBytes: pushMaxResponseBytes, maxRedirects, userAgent: 'tallyho-jobs/1' },
        { headers, body },
      );
      return { status: response.status, body: response.body, retryAfter: response.retryAfter };
    },
  };
}

/** A gate run's action checked as the effect it becomes (only a job's depends on this deployment). */
export function gateActionCheck(rules: EffectRules): (action: GateAction) => Promise<void> {
  return async (action) => {
    if (action.type !== 'job') return;
    const issues = await effectIssues({ type: 'job', processor: action.processor, items: action.items }, rules, 'body.action');
    if (issues.length > 0) throw validationError('The action cannot run here', issues);
  };
}
