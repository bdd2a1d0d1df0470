/**
 * The queue operations a lease is made of. A lease *is* a queue message's visibility timeout and its
 * pop receipt the proof of holding it: receiving makes the message invisible for the lease, updating
 * with the pop receipt extends (or shortens) that and yields a new receipt, deleting with it ends the
 * message. A receipt that no longer matches (the message was received again after its lease ran out,
 * extended under a newer receipt, or deleted) fails with 404, which is how a stale lease is told.
 */
import type { QueueClient } from '@azure/storage-queue';

import { hasStatus, translateStorageError } from '../../storage/errors';

export interface QueuedMessage {
  readonly messageId: string;
  readonly popReceipt: string;
  /** 1 on the first delivery. */
  readonly dequeueCount: number;
  /** The message text as sent (base64 of the sealed envelope). */
  readonly text: string;
}

/** The receipt no longer holds the message. */
export class ReceiptLost extends Error {
  override readonly name = 'ReceiptLost';
}

/** What `work` gives, or undefined when the message is no longer held (ReceiptLost): someone else's now. */
export async function unlessLost<T>(work: Promise<T>): Promise<T | undefined> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof ReceiptLost) return undefined;
    throw err;
  }
}

export interface ProcessorQueues {
  /** Up to `max` (1-32) messages, each invisible for `visibilitySeconds`. */
  receive(queue: string, max: number, visibilitySeconds: number): Promise<QueuedMessage[]>;
  /** Sets the message visible again after `visibilitySeconds` (and replaces its text, if given); the new pop receipt. */
  update(queue: string, messageId: string, popReceipt: string, visibilitySeconds: number, text?: string): Promise<string>;
  delete(queue: string, messageId: string, popReceipt: string): Promise<void>;
  /**
   * Sends `text` to `queue` invisible for `visibilitySeconds`, held from the start: the answer's pop
   * receipt updates and deletes it as a received one's does (Put Message returns it), and its
   * dequeue count stays 0 until a receive.
   */
  put(queue: string, text: string, visibilitySeconds: number): Promise<{ messageId: string; popReceipt: string }>;
}

export class StorageProcessorQueues implements ProcessorQueues {
  constructor(private readonly queue: (name: string) => Promise<QueueClient>) {}

  async receive(queue: string, max: number, visibilitySeconds: number): Promise<QueuedMessage[]> {
    try {
      const response = await (await this.queue(queue)).receiveMessages({ numberOfMessages: max, visibilityTimeout: visibilitySeconds });
      return response.receivedMessageItems.map((m) => ({
        messageId: m.messageId,
        popReceipt: m.popReceipt,
        dequeueCount: m.dequeueCount,
        text: m.messageText,
      }));
    } catch (err) {
      throw translateStorageError(err, `receiving from ${queue}`);
    }
  }

  async update(queue: string, messageId: string, popReceipt: string, visibilitySeconds: number, text?: string): Promise<string> {
    try {
      const response = await (await this.queue(queue)).updateMessage(messageId, popReceipt, text, visibilitySeconds);
      return response.popReceipt ?? '';
    } catch (err) {
      if (hasStatus(err, 404) || hasStatus(err, 400)) throw new ReceiptLost(`message ${messageId} of ${queue} is no longer held`);
      throw translateStorageError(err, `updating a message of ${queue}`);
    }
  }

  async put(queue: string, text: string, visibilitySeconds: number): Promise<{ messageId: string; popReceipt: string }> {
    try {
      // Never expires, as the work queues' envelopes: a held batch must not vanish while a backlog drains.
      const sent = await (await this.queue(queue)).sendMessage(text, { messageTimeToLive: -1, visibilityTimeout: visibilitySeconds });
      return { messageId: sent.messageId, popReceipt: sent.popReceipt };
    } catch (err) {
      throw translateStorageError(err, `sending to ${queue}`);
    }
  }

  async delete(queue: string, messageId: string, popReceipt: string): Promise<void> {
    try {
      await (await this.queue(queue)).deleteMessage(messageId, popReceipt);
    } catch (err) {
      if (hasStatus(err, 404) || hasStatus(err, 400)) throw new ReceiptLost(`message ${messageId} of ${queue} is no longer held`);
      throw translateStorageError(err, `deleting a message of ${queue}`);
    }
  }
}
