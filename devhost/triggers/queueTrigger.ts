/**
 * Storage-queue triggers with the queue extension's semantics: messages are fetched in batches of
 * `batchSize` and processed concurrently; a new batch is fetched once no more than
 * `newBatchThreshold` are still running (so at most batchSize + newBatchThreshold run at once);
 * empty polls back off (randomised, doubling from 100 ms) up to `maxPollingInterval`; a message is
 * deleted on success, made visible again after `visibilityTimeout` on failure, and moved to
 * `<queue>-poison` (same body, same encoding) once its dequeue count reaches `maxDequeueCount`.
 * With `messageEncoding: base64` (the default) a body that is not base64 goes straight to poison.
 * While a message runs its invisibility is renewed, as the host does.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleepFor } from 'node:timers/promises';

import type { DequeuedMessageItem, QueueClient } from '@azure/storage-queue';

import type { BindingIo, MessageEncoding } from '../bindings/bindingIo';
import { withJsonProperties } from '../bindings/expressions';
import type { Invoker } from '../core/invoker';
import type { FunctionMetadata, RpcParameterBinding, RpcTypedData } from '../core/types';
import type { HostLogger } from '../log';

interface QueueOptions {
  readonly batchSize: number;
  readonly newBatchThreshold: number;
  readonly maxPollingIntervalMs: number;
  readonly visibilityTimeoutMs: number;
  readonly maxDequeueCount: number;
  readonly messageEncoding: MessageEncoding;
}

/** How long a fetched message stays invisible while it runs; renewed at half time. */
const leaseSeconds = 600;
const minPollMs = 100;

export interface QueueListenerOptions {
  readonly fn: FunctionMetadata;
  readonly triggerName: string;
  readonly queueName: string;
  readonly queue: QueueClient;
  readonly poison: () => Promise<QueueClient>;
  readonly settings: QueueOptions;
  readonly invoker: Invoker;
  readonly bindings: BindingIo;
  readonly log: HostLogger;
  /**
   * Waits out an empty poll's back-off; `woken` aborts when a write to the queue wakes the listener.
   * Default: a timer. Tests pass their own, to see the back-off chosen without measuring time.
   */
  readonly sleep?: (ms: number, woken: AbortSignal) => Promise<void>;
}

const timerSleep = (ms: number, woken: AbortSignal): Promise<void> => sleepFor(ms, undefined, { signal: woken }).catch(() => undefined);

/** What an invocation learns about its message (trigger metadata and binding data). */
type MessageFacts = Pick<DequeuedMessageItem, 'messageId' | 'dequeueCount' | 'insertedOn' | 'expiresOn' | 'nextVisibleOn' | 'popReceipt'>;

/** A queue message's default time to live. */
const messageTtlMs = 7 * 24 * 3_600_000;

function isBase64(text: string): boolean {
  return text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);
}

function iso(date: Date | undefined): RpcTypedData {
  return { json: JSON.stringify(date === undefined ? null : date.toISOString()) };
}

export class QueueListener {
  private running = false;
  private readonly active = new Set<Promise<void>>();
  /**
   * Wakes the poll loop parked at the batch threshold when a message ends. Not Promise.race over
   * `active`: each wait would add a reaction to every message under way, kept until it ends.
   */
  private freed: (() => void) | undefined;
  private wake: AbortController | undefined;
  private delayMs = minPollMs;
  private loop: Promise<void> | undefined;

  constructor(private readonly options: QueueListenerOptions) {}

  get functionName(): string {
    return this.options.fn.name;
  }

  get queueName(): string {
    return this.options.queueName;
  }

  start(): void {
    this.running = true;
    this.loop = this.poll();
  }

  /** Stops fetching new messages; resolves when the poll loop has ended (messages under way go on). */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.abort();
    await this.loop;
  }

  /** Resolves when every message under way is settled (deleted, released or poisoned). */
  async finished(): Promise<void> {
    await Promise.allSettled([...this.active]);
  }

  /**
   * Runs the function once on `text` as if it had arrived as a fresh message (admin "run now"): the
   * same trigger metadata, binding data and output bindings as a polled message; nothing is read from
   * or deleted on the queue. Resolves true when the function succeeded.
   */
  runOnce(text: string, now: number): Promise<boolean> {
    const at = new Date(now);
    return this.invoke(
      {
        messageId: randomUUID(),
        dequeueCount: 1,
        insertedOn: at,
        expiresOn: new Date(now + messageTtlMs),
        nextVisibleOn: at,
        popReceipt: '',
      },
      text,
    );
  }

  /** Something was just written to this queue: poll now instead of waiting out the back-off. */
  notify(): void {
    this.delayMs = minPollMs;
    this.wake?.abort();
  }

  private async sleep(ms: number): Promise<void> {
    const wake = new AbortController();
    this.wake = wake;
    try {
      await (this.options.sleep ?? timerSleep)(ms, wake.signal);
    } finally {
      if (this.wake === wake) this.wake = undefined;
    }
  }

  private async poll(): Promise<void> {
    const { queue, settings, log } = this.options;
    while (this.running) {
      if (this.active.size > settings.newBatchThreshold) {
        await new Promise<void>((resolve) => (this.freed = resolve));
        continue;
      }
      let messages: DequeuedMessageItem[];
      try {
        const response = await queue.receiveMessages({ numberOfMessages: settings.batchSize, visibilityTimeout: leaseSeconds });
        messages = response.receivedMessageItems;
      } catch (err) {
        const status = (err as { statusCode?: number }).statusCode;
        if (status === 404) {
          await queue.createIfNotExists().catch(() => undefined);
        } else {
          log(
            'warn',
            `Queue '${this.queueName}' (${this.functionName}): receive failed: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
        messages = [];
      }
      if (!this.running) {
        // Fetched during shutdown: give them back at once.
        await Promise.allSettled(messages.map((m) => queue.updateMessage(m.messageId, m.popReceipt, undefined, 0)));
        return;
      }
      if (messages.length === 0) {
        const jittered = this.delayMs * (0.8 + Math.random() * 0.4);
        await this.sleep(Math.min(jittered, settings.maxPollingIntervalMs));
        this.delayMs = Math.min(this.delayMs * 2, settings.maxPollingIntervalMs);
        continue;
      }
      this.delayMs = minPollMs;
      for (const message of messages) {
        const run = this.process(message).catch((err: unknown) => {
          log(
            'error',
            `Queue '${this.queueName}' (${this.functionName}): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
          );
        });
        this.active.add(run);
        void run.finally(() => {
          this.active.delete(run);
          const freed = this.freed;
          this.freed = undefined;
          freed?.();
        });
      }
    }
  }

  private async process(message: DequeuedMessageItem): Promise<void> {
    const { settings, queue, log } = this.options;
    let popReceipt = message.popReceipt;
    if (message.dequeueCount > settings.maxDequeueCount) {
      await this.poison(
        message,
        popReceipt,
        `its dequeue count ${message.dequeueCount} exceeds maxDequeueCount ${settings.maxDequeueCount}`,
      );
      return;
    }
    if (settings.messageEncoding === 'base64' && !isBase64(message.messageText)) {
      await this.poison(message, popReceipt, 'its body is not base64 (host.json extensions.queues.messageEncoding is "base64")');
      return;
    }
    const text = settings.messageEncoding === 'base64' ? Buffer.from(message.messageText, 'base64').toString('utf8') : message.messageText;
    const renew = setInterval(
      () => {
        queue
          .updateMessage(message.messageId, popReceipt, undefined, leaseSeconds)
          .then((r) => {
            if (r.popReceipt !== undefined) popReceipt = r.popReceipt;
          })
          .catch(() => undefined);
      },
      (leaseSeconds * 1000) / 2,
    );
    renew.unref();
    let ok = false;
    try {
      ok = await this.invoke(message, text);
    } finally {
      clearInterval(renew);
    }
    if (ok) {
      await queue.deleteMessage(message.messageId, popReceipt);
    } else if (message.dequeueCount >= settings.maxDequeueCount) {
      await this.poison(message, popReceipt, `it failed ${message.dequeueCount} time(s) (maxDequeueCount ${settings.maxDequeueCount})`);
    } else {
      await queue.updateMessage(message.messageId, popReceipt, undefined, Math.ceil(settings.visibilityTimeoutMs / 1000));
      log('debug', `Queue '${this.queueName}': message ${message.messageId} will be retried`);
    }
  }

  private async invoke(message: MessageFacts, text: string): Promise<boolean> {
    const { fn, triggerName, invoker, bindings, log } = this.options;
    const triggerMetadata: Record<string, RpcTypedData> = {
      QueueTrigger: { string: text },
      Id: { string: message.messageId },
      DequeueCount: { int: message.dequeueCount },
      InsertionTime: iso(message.insertedOn),
      ExpirationTime: iso(message.expiresOn),
      NextVisibleTime: iso(message.nextVisibleOn),
      PopReceipt: { string: message.popReceipt },
    };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const data = withJsonProperties(
      {
        QueueTrigger: text,
        Id: message.messageId,
        DequeueCount: message.dequeueCount,
        InsertionTime: message.insertedOn.toISOString(),
        ExpirationTime: message.expiresOn.toISOString(),
        NextVisibleTime: message.nextVisibleOn.toISOString(),
        PopReceipt: message.popReceipt,
      },
      parsed,
    );
    try {
      const inputData: RpcParameterBinding[] = [{ name: triggerName, data: { string: text } }, ...(await bindings.inputData(fn, data))];
      const outcome = await invoker.invoke({ functionName: fn.name, inputData, triggerMetadata });
      if (!outcome.ok) {
        log(
          'error',
          `Executed 'Functions.${fn.name}' (Failed, Id=${outcome.invocationId}, DequeueCount=${message.dequeueCount}): ${outcome.error.stack ?? outcome.error.message}`,
        );
        return false;
      }
      await bindings.applyOutputs(fn, outcome.response, data);
      log('info', `Executed 'Functions.${fn.name}' (Succeeded, Id=${outcome.invocationId}, Duration=${Math.round(outcome.durationMs)}ms)`);
      return true;
    } catch (err) {
      log(
        'error',
        `Function '${fn.name}' failed on message ${message.messageId}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      );
      return false;
    }
  }

  private async poison(message: DequeuedMessageItem, popReceipt: string, why: string): Promise<void> {
    const poisonQueue = await this.options.poison();
    await poisonQueue.sendMessage(message.messageText);
    await this.options.queue.deleteMessage(message.messageId, popReceipt);
    this.options.log('warn', `Message ${message.messageId} moved to '${poisonQueue.name}' because ${why}`);
  }
}
