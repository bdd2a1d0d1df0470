/**
 * Which storage queues and Service Bus entities a caller's effect may write to: the allow-lists, in
 * one place. An effect runs with the app's own rights, so one naming a queue the app or the Functions
 * host reads would let a function-key caller inject work (job envelopes, poison messages, gate
 * actions, Durable task hub messages, host internals), and one naming the app's own topics would
 * forge its events (`gate-events` releases, `job-events` completions) to every worker that trusts
 * them. Those are refused whatever the allow-lists say; everything else must match
 * TALLYHO_SCHEDULES_ALLOWED_QUEUES or TALLYHO_SCHEDULES_ALLOWED_SERVICEBUS_ENTITIES (both default `app-*`).
 * (A gate run's `enqueue` writes to the app's own gate-actions queue: the app names it, no caller.)
 */
import { matchesPattern } from '../namePatterns';
import { queues as appQueues, serviceBusEntities } from '../resources';

export interface QueueRules {
  /** Allow-list entries: exact names or `prefix*` (`*` alone: any queue that is not reserved). */
  readonly allowed: readonly string[];
  /** The jobs work-queue prefix in use (TALLYHO_JOBS_QUEUE_PREFIX), besides the default one. */
  readonly jobsQueuePrefix: string;
}

const appQueueNames: readonly string[] = Object.values(appQueues).flat();

/** A work queue (`<prefix>-<n>`), the hand-on queue (`-d`) or the cancel queue (`-c`) of the jobs capability. */
function workQueueOf(prefix: string, name: string): boolean {
  return name.startsWith(`${prefix}-`) && /^(\d+|d|c)$/.test(name.slice(prefix.length + 1));
}

/**
 * A declared processor's queue (`<prefix>-x-<name>`) or a retry lane, a declared processor's or a
 * work queue's (`<prefix>-r-<name or n>`): their messages are sealed envelopes the app reads.
 */
function envelopeQueueOf(prefix: string, name: string): boolean {
  return name.startsWith(`${prefix}-x-`) || name.startsWith(`${prefix}-r-`);
}

/** Why a queue belongs to the app or the host, or undefined when it does not. */
function reservedQueueReason(name: string, jobsQueuePrefix: string): string | undefined {
  if (name.endsWith('-poison')) return 'poison queues belong to the Functions host';
  if (name.startsWith('azure-webjobs-')) return 'azure-webjobs-* queues belong to the Functions host';
  if (/-control-\d{2}$/.test(name) || name.endsWith('-workitems')) return 'this is a Durable Functions task hub queue';
  if (
    appQueueNames.includes(name) ||
    workQueueOf('jobs-work', name) ||
    workQueueOf(jobsQueuePrefix, name) ||
    envelopeQueueOf('jobs-work', name) ||
    envelopeQueueOf(jobsQueuePrefix, name)
  ) {
    return 'this queue belongs to the app itself';
  }
  return undefined;
}

/** The issue message for a target queue, or undefined when it may be used. */
export function queueTargetIssue(name: string, rules: QueueRules): string | undefined {
  const reserved = reservedQueueReason(name, rules.jobsQueuePrefix);
  if (reserved !== undefined) return `Not a target: ${reserved}`;
  if (!rules.allowed.some((p) => matchesPattern(p, name))) return 'This queue is not allowed (TALLYHO_SCHEDULES_ALLOWED_QUEUES)';
  return undefined;
}

const appServiceBusNames: readonly string[] = [
  ...Object.values<string>(serviceBusEntities.topics),
  ...Object.values<string>(serviceBusEntities.queues),
].map((name) => name.toLowerCase());

/** The issue message for a Service Bus target entity, or undefined when it may be used. Names are case-insensitive, as in Service Bus. */
export function serviceBusTargetIssue(entity: string, allowed: readonly string[]): string | undefined {
  const name = entity.toLowerCase();
  if (appServiceBusNames.some((own) => name === own || name.startsWith(`${own}/`))) {
    return "Not a target: this entity carries the app's own events";
  }
  if (!allowed.some((p) => matchesPattern(p.toLowerCase(), name)))
    return 'This entity is not allowed (TALLYHO_SCHEDULES_ALLOWED_SERVICEBUS_ENTITIES)';
  return undefined;
}
