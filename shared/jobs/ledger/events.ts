/**
 * `JobCompleted` on the `job-events` Service Bus topic, once per completion. The finalizer that won
 * the completion publishes it; should it crash before noting that, the reconciler publishes again
 * with the same message id (`<job>:<round>:completed`), which the topic's duplicate detection drops.
 * Without Service Bus the job notes `notConfigured` and nothing is sent.
 */
import type { ServiceBusMessage } from '@azure/service-bus';

import type { JobRecord } from './jobRecord';

/** What the publisher needs of a ServiceBusSender (tests pass a fake). */
export interface JobEventSender {
  sendMessages(message: ServiceBusMessage): Promise<void>;
}

const jobCompletedSubject = 'JobCompleted';

function jobCompletedMessage(job: JobRecord): ServiceBusMessage {
  return {
    messageId: `${job.id}:${job.round}:completed`,
    subject: jobCompletedSubject,
    contentType: 'application/json',
    body: {
      type: jobCompletedSubject,
      job: job.id,
      processor: job.processor,
      state: job.phase,
      round: job.round,
      items: job.items,
      succeeded: job.succeeded,
      failed: job.failed,
      completedAt: job.completedAt === null ? null : new Date(job.completedAt).toISOString(),
      summary: job.summary,
    },
    applicationProperties: { job: job.id, state: job.phase, processor: job.processor },
  };
}

export class JobEventPublisher {
  constructor(
    /** Undefined when no Service Bus is configured. */
    private readonly sender: () => JobEventSender | undefined,
  ) {}

  /** Throws when Service Bus fails: the job keeps its event pending and the reconciler tries again. */
  async publish(job: JobRecord): Promise<'published' | 'notConfigured'> {
    const sender = this.sender();
    if (sender === undefined) return 'notConfigured';
    await sender.sendMessages(jobCompletedMessage(job));
    return 'published';
  }
}
