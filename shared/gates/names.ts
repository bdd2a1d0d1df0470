/**
 * Every Durable name the gates capability uses, defined once: the registrations in functions/ and
 * the orchestrators that call them read these, so a rename cannot leave a caller behind.
 */
import type { EntityId, RetryOptions } from 'durable-functions';

import { entityId, entityName, type EntityRef } from '../durable/entities';

/** Entity, orchestration and activity function names. */
export const gateFunctions = {
  entity: entityName('gate'),
  /** A gated run: registers with the gate, waits for the release, then performs its action. */
  run: 'gateRun',
  /** Releases one generation of a gate and pushes the release to its registered runs. */
  release: 'gateRelease',
  /** Opens a generation (create or reset) and, when it has a `releaseAt`, releases it then. */
  generation: 'gateGeneration',
  /** Raises the release event on a batch of waiting runs. */
  notify: 'gateNotify',
  /** Writes the audit record and tells this process and the Service Bus topic. */
  announce: 'gateAnnounce',
  /** Performs a run's action once it has been released. */
  action: 'gateAction',
} as const;

/** External events the gate's orchestrations wait for. */
export const gateEvents = {
  /** Payload: `GateReleasedEvent`. */
  released: 'GateReleased',
  /** Tells a generation orchestration that its scheduled release no longer applies (a reset). */
  scheduleCancelled: 'GateScheduleCancelled',
} as const;

/**
 * Instance ids. They are deterministic so that concurrent calls for the same thing collapse into one
 * instance (two releases of generation 3, two resets from generation 3). Gate names never contain
 * `:`, so the ids cannot collide across gates.
 */
export const gateInstanceIds = {
  release: (gate: string, generation: number): string => `gate:${gate}:release:${generation}`,
  generation: (gate: string, generation: number): string => `gate:${gate}:gen:${generation}`,
  run: (gate: string, runId: string): string => `gate:${gate}:run:${runId}`,
} as const;

/** The gate's entity id (`@gate@<name>`). */
export function gateEntityId(gate: string): EntityId & EntityRef {
  return entityId(gateFunctions.entity, gate);
}

/**
 * Retries for the activities (table, queue and Service Bus writes, event pushes): short, because a
 * release is waited for by people and workers. Structural for the same reason as the entity id.
 */
export const activityRetry: RetryOptions = {
  firstRetryIntervalInMilliseconds: 500,
  maxNumberOfAttempts: 5,
  backoffCoefficient: 2,
  maxRetryIntervalInMilliseconds: 10_000,
  retryTimeoutInMilliseconds: 120_000,
};
