/**
 * Every Durable name the gates capability uses, defined once: the registrations in functions/ and
 * the orchestrators that call them read these, so a rename cannot leave a caller behind.
 */
import type { RetryOptions } from 'durable-functions';

/** Orchestration and activity function names. */
export const gateFunctions = {
  /** After a release: makes it if the caller could not, publishes it, performs the released runs' actions. */
  release: 'gateRelease',
  /** After a create or reset: publishes it and, when the generation has a `releaseAt`, releases it then. */
  generation: 'gateGeneration',
  /** Performs the actions of runs that registered after the release. */
  lateActions: 'gateLateActions',
  /** Makes (or finds) a release, then tells this process's watchers and the Service Bus topic. */
  announceRelease: 'gateAnnounceRelease',
  /** Finds whether a create or reset committed, and with which schedule. */
  opened: 'gateOpened',
  /** Tells this process's watchers and the Service Bus topic. */
  announce: 'gateAnnounce',
  /** Performs a batch of released runs' actions. */
  actions: 'gateActions',
  /** How the releasing instance's own fan-out of a release's actions stands (its lease row). */
  fanOutState: 'gateFanOutState',
  /** A generation's scheduled release (the same use-case as the API's). */
  scheduledRelease: 'gateScheduledRelease',
} as const;

/** External events the gate's orchestrations wait for. */
export const gateEvents = {
  /** Tells a generation orchestration that its scheduled release no longer applies (a reset). */
  scheduleCancelled: 'GateScheduleCancelled',
} as const;

/**
 * Instance ids. They are deterministic so that concurrent calls for the same thing collapse into one
 * instance (two releases of generation 3). Gate names never contain `:`, so the ids cannot collide
 * across gates, and no caller-chosen name reaches them except the gate's own.
 */
export const gateInstanceIds = {
  release: (gate: string, generation: number): string => `gate:${gate}:release:${generation}`,
  /** Per generation and schedule: a create or reset that lost to a concurrent one with another schedule has its own. */
  generation: (gate: string, generation: number, releaseAt: string | null): string =>
    `gate:${gate}:gen:${generation}:${releaseAt === null ? 'none' : Date.parse(releaseAt)}`,
  late: (gate: string, generation: number, batch: string): string => `gate:${gate}:late:${generation}:${batch}`,
  /** Not an instance: the id runs are known by in the API (`id`), unchanged from when each run was one. */
  run: (gate: string, runId: string): string => `gate:${gate}:run:${runId}`,
} as const;

/**
 * Retries for the activities (table, queue and Service Bus writes): short, because a release is
 * waited for by people and workers. Structural for the same reason as the instance ids.
 */
export const activityRetry: RetryOptions = {
  firstRetryIntervalInMilliseconds: 500,
  maxNumberOfAttempts: 5,
  backoffCoefficient: 2,
  maxRetryIntervalInMilliseconds: 10_000,
  retryTimeoutInMilliseconds: 120_000,
};

/** Ranges the run keys are spread over (rows.ts), which a release's action batches divide between them. */
export const runShards = 16;

/** Rounds of retrying the actions a retry may cure, and the pause before each (seconds), before recording them failed. */
export const actionRetryDelaysSeconds = [1, 2, 5, 10, 30, 60] as const;

/** How long a late-actions orchestration looks for runs whose registration it was started for. */
export const lateRegistrationWaitSeconds = [1, 2, 5, 10, 30, 60] as const;

/**
 * The lease an instance holds on fanning a release's actions out itself (fanOut.ts): written with the
 * release, renewed every third of it while the sends go on, ended when they are. The release
 * orchestration sweeps what is left only once the lease ended or lapsed, so a slow fan-out on a busy
 * machine is never overtaken by the sweep (which sent its actions a second time under the fixed grace
 * this replaced), and what a killed instance left waits at most this long, whatever the release's size
 * (a grace of 60 s at 10,000 actions). Long enough that a loaded event loop does not miss a renewal.
 */
export const fanOutLeaseSeconds = 10;

/** However long a fan-out keeps renewing its lease, the orchestration sweeps after this (a stuck fan-out). */
export const fanOutMaxWaitSeconds = 1800;
