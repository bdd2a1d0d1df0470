/**
 * The work queues: `<prefix>-0` … `<prefix>-<K-1>` (shared/resources.ts names the default ones),
 * and a retry lane beside each, `<prefix>-r-0` … `<prefix>-r-<K-1>`: retried items of the in-app
 * processors go to the lane of the queue their envelope came from, read by a trigger of its own, so
 * they come back after their back-off and one poll interval however long the work queue's backlog is
 * (a storage queue hands messages out in the order they became visible, so a retry sent back to the
 * work queue waits behind all of it). Declared processors' lanes are named the same way (`laneName`);
 * every queue's name comes from ../queueNames.ts.
 * Messages are base64 (host.json `messageEncoding`) and never expire: a job's envelope must not
 * vanish after the default seven days while a backlog drains.
 */
import type { QueueClient } from '@azure/storage-queue';

import { translateStorageError } from '../../storage/errors';
import type { Signer } from '../../signing/signer';
import { poisonQueueName } from '../queueNames';
import type { Envelope } from './envelope';
import { sealEnvelope } from './seal';

/**
 * Sends all, waits for every send to settle, then throws the first failure: a caller that fails
 * has nothing still in flight (its resume point is exact as of its return).
 */
export async function sendAll(sends: readonly Promise<void>[]): Promise<void> {
  const settled = await Promise.allSettled(sends);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/**
 * A work queue's backlog: envelopes waiting in it and its retry lane, and in their poison queues
 * (approximate counts, as the service reports them).
 */
export interface QueueDepth {
  readonly queue: string;
  readonly messages: number;
  readonly poison: number;
  /** When the oldest envelope at the front of the queue or its lane was first queued, in ms; undefined when none is visible. */
  readonly oldestQueuedAt: number | undefined;
}

/** The most messages one peek shows (the service's limit). */
export const peekLimit = 32;

/**
 * One look at a queue: its approximate length (every message: visible, or held invisible by a lease
 * or a back-off), how many are visible at its front (a peek: at most `peekLimit`, so `peekLimit`
 * means "at least that many"), and when the front one was first queued. Storage queues are not
 * strictly FIFO, so the front is the oldest visible message as the service orders them; an envelope
 * made visible again after a retry keeps its first insertion time.
 */
export interface QueueLook {
  readonly messages: number;
  readonly visible: number;
  readonly oldestQueuedAt: number | undefined;
}

export interface EnvelopeQueues {
  /** Work queues (the in-app processors' triggers read them). */
  readonly count: number;
  /** The name of work queue `index` (modulo the count). */
  workQueue(index: number): string;
  /** The retry lane of work queue `index` (modulo the count). */
  workLane(index: number): string;
  /** Sends an envelope to `queue` (a work queue or a declared processor's), visible after `delaySeconds`. */
  send(queue: string, envelope: Envelope, delaySeconds: number): Promise<void>;
  /** Every work queue's backlog (its lane's counted in). */
  depths(): Promise<QueueDepth[]>;
  /** One look at `queue` (a declared processor's), peeking at up to `peek` messages of its front. */
  look(queue: string, peek: number): Promise<QueueLook>;
}

/** Base64 of the sealed UTF-8 JSON: what the host decodes with `messageEncoding: base64`, on every queue alike. */
export function envelopeMessage(envelope: Envelope, signer: Signer): string {
  return Buffer.from(sealEnvelope(envelope, signer), 'utf8').toString('base64');
}

export class StorageEnvelopeQueues implements EnvelopeQueues {
  constructor(
    private readonly queue: (name: string) => Promise<QueueClient>,
    private readonly names: readonly string[],
    private readonly lanes: readonly string[],
    private readonly signer: () => Promise<Signer>,
  ) {}

  get count(): number {
    return this.names.length;
  }

  workQueue(index: number): string {
    return this.names[index % this.names.length] as string;
  }

  workLane(index: number): string {
    return this.lanes[index % this.lanes.length] as string;
  }

  async depths(): Promise<QueueDepth[]> {
    return Promise.all(
      this.names.map(async (queue, i) => {
        const lane = this.workLane(i);
        const [front, laneFront, poison, lanePoison] = await Promise.all([
          this.look(queue, 1),
          this.look(lane, 1),
          this.lengthOf(poisonQueueName(queue)),
          this.lengthOf(poisonQueueName(lane)),
        ]);
        const queued = [front.oldestQueuedAt, laneFront.oldestQueuedAt].filter((t): t is number => t !== undefined);
        return {
          queue,
          messages: front.messages + laneFront.messages,
          poison: poison + lanePoison,
          oldestQueuedAt: queued.length === 0 ? undefined : Math.min(...queued),
        };
      }),
    );
  }

  async look(queue: string, peek: number): Promise<QueueLook> {
    const [messages, front] = await Promise.all([this.lengthOf(queue), this.peek(queue, peek)]);
    const oldest = front.reduce<number | undefined>((min, at) => (min === undefined || at < min ? at : min), undefined);
    return { messages, visible: front.length, oldestQueuedAt: oldest };
  }

  private async lengthOf(name: string): Promise<number> {
    try {
      return (await (await this.queue(name)).getProperties()).approximateMessagesCount ?? 0;
    } catch (err) {
      throw translateStorageError(err, `reading the length of ${name}`);
    }
  }

  /** The insertion times of the visible messages at the front of `name` (a queue not created yet has none). */
  private async peek(name: string, count: number): Promise<number[]> {
    try {
      const answer = await (await this.queue(name)).peekMessages({ numberOfMessages: Math.max(1, Math.min(peekLimit, count)) });
      return answer.peekedMessageItems.map((m) => m.insertedOn.getTime());
    } catch (err) {
      throw translateStorageError(err, `peeking at ${name}`);
    }
  }

  async send(name: string, envelope: Envelope, delaySeconds: number): Promise<void> {
    const text = envelopeMessage(envelope, await this.signer());
    try {
      await (await this.queue(name)).sendMessage(text, { messageTimeToLive: -1, visibilityTimeout: delaySeconds });
    } catch (err) {
      throw translateStorageError(err, `sending envelope ${envelope.envelopeId} of job ${envelope.jobId} to ${name}`);
    }
  }
}
