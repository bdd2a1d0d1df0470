/**
 * The capabilities' use-cases as the ports other capabilities take them through. A capability
 * declares the port it needs (shared/effects' GateReleasePort and JobPort); the composition root
 * adapts the owner's service to it, so neither capability imports the other.
 */
import { effectIssues, type EffectRules } from '../effects/admission';
import type { GateReleasePort, JobPort } from '../effects/runner';
import { parseAllowList } from '../effects/webhook/allowList';
import { validationError } from '../errors';
import type { GateAction } from '../gates/actions';
import type { GateService } from '../gates/service';
import { isFinished } from '../jobs/jobRecord';
import type { JobService } from '../jobs/service';
import type { AppConfig } from './settings';

/**
 * What an effect may do in this deployment: the allow-lists (TALLYHO_SCHEDULES_*: schedules are
 * where callers choose queues, entities and URLs), the configured services and the capabilities.
 */
export function effectRulesOf(
  config: Pick<AppConfig, 'schedules' | 'jobs'>,
  available: { readonly serviceBus: boolean; readonly jobs: EffectRules['jobs'] },
): EffectRules {
  const s = config.schedules;
  return {
    queues: { allowed: s.allowedQueues, jobsQueuePrefix: config.jobs.queuePrefix },
    serviceBusEntities: s.allowedServiceBusEntities,
    serviceBusConfigured: available.serviceBus,
    webhook: { allowed: parseAllowList(s.webhookAllowedHosts), allowPrivateAddresses: s.webhookAllowPrivateAddresses },
    gatesAvailable: true,
    jobs: available.jobs,
  };
}

/** The gates capability's release. */
export function gateReleasePort(service: GateService): GateReleasePort {
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
export function jobPort(jobs: JobService): JobPort {
  return {
    async submit(processor, items, key) {
      const { job } = await jobs.submit({ processor, items }, key);
      return job.id;
    },
    async status(handle) {
      const job = await jobs.job(handle);
      if (!isFinished(job.phase)) return { state: 'running' };
      const counts = `${job.succeeded ?? 0} succeeded, ${job.failed ?? 0} failed`;
      return job.phase === 'completed'
        ? { state: 'succeeded', detail: `job ${job.id} completed (${counts})` }
        : { state: 'failed', reason: `job ${job.id} completed with failures (${counts})` };
    },
  };
}

/** A gate run's action checked as the effect it becomes (only a job's depends on this deployment). */
export function gateActionCheck(rules: EffectRules): (action: GateAction) => void {
  return (action) => {
    if (action.type !== 'job') return;
    const issues = effectIssues({ type: 'job', processor: action.processor, items: action.items }, rules, 'body.action');
    if (issues.length > 0) throw validationError('The action cannot run here', issues);
  };
}
