/**
 * The gate activities' work (functions/gates.ts only binds them): pushing a release to a batch of
 * runs, announcing a create/release/reset, and performing a released run's action.
 */
import type { QueueClient } from '@azure/storage-queue';

import type { SubmitRequest } from '../jobs/submit';
import { mapLimited } from '../mapLimited';
import { translateStorageError } from '../storage/errors';
import { type GateAction, type GateActionResult, jobActionKey } from './actions';
import { auditRecordOf, type GateAuditLog } from './audit';
import type { GateDurableClient } from './durablePort';
import type { ActionInput, AnnounceInput, AnnounceResult, NotifyInput, NotifyResult } from './messages';
import { gateEvents } from './names';
import type { GateEventPublisher } from './publisher';
import type { GateWatchHub } from './watchHub';

/** Events raised at once by one notify activity. */
const notifyConcurrency = 16;

/** Raises `GateReleased` on every run of the batch; runs that finished or vanished count as gone. */
export async function notifyWaiters(client: GateDurableClient, input: NotifyInput): Promise<NotifyResult> {
  const outcomes = await mapLimited(input.waiters, notifyConcurrency, (waiter) =>
    client.raiseEvent(waiter, gateEvents.released, input.event),
  );
  const delivered = outcomes.filter((outcome) => outcome === 'delivered').length;
  return { delivered, gone: outcomes.length - delivered };
}

export interface AnnounceDeps {
  readonly audit: GateAuditLog;
  readonly hub: GateWatchHub;
  readonly publisher: GateEventPublisher;
  readonly now: () => number;
}

/** Audit row, this process's long-poll/SSE clients, then the Service Bus topic. */
export async function announce(deps: AnnounceDeps, input: AnnounceInput): Promise<AnnounceResult> {
  deps.hub.publish(input.gate);
  await deps.audit.record(auditRecordOf(input, new Date(deps.now()).toISOString()));
  const published = await deps.publisher.publish(input);
  return { audited: true, published };
}

export interface ActionDeps {
  readonly actionsQueue: () => Promise<QueueClient>;
  /** The jobs capability's submit use-case (`JobService.submit`, as POST /api/jobs and schedules' job target use it). */
  readonly jobs: () => { submit(request: SubmitRequest, idempotencyKey: string): Promise<{ readonly job: { readonly id: string } }> };
}

async function enqueue(deps: ActionDeps, action: Extract<GateAction, { type: 'enqueue' }>, input: ActionInput): Promise<GateActionResult> {
  const queue = await deps.actionsQueue();
  const message = { gate: input.gate, generation: input.generation, runId: input.runId, payload: action.payload ?? null };
  try {
    // Base64, as the Functions queue trigger expects by default (host.json messageEncoding).
    const sent = await queue.sendMessage(Buffer.from(JSON.stringify(message), 'utf8').toString('base64'));
    return { type: 'enqueue', queue: queue.name, messageId: sent.messageId };
  } catch (err) {
    throw translateStorageError(err, `enqueueing the action of run ${input.runId}`);
  }
}

async function submitJob(deps: ActionDeps, action: Extract<GateAction, { type: 'job' }>, input: ActionInput): Promise<GateActionResult> {
  const { job } = await deps.jobs().submit({ processor: action.processor, items: action.items }, jobActionKey(input.gate, input.runId));
  return { type: 'job', jobId: job.id };
}

/** One case per action type; the exhaustive switch makes a new type a compile error until handled. */
export async function performAction(deps: ActionDeps, input: ActionInput): Promise<GateActionResult> {
  const action = input.action;
  switch (action.type) {
    case 'none':
      return { type: 'none' };
    case 'enqueue':
      return enqueue(deps, action, input);
    case 'job':
      return submitJob(deps, action, input);
  }
}
