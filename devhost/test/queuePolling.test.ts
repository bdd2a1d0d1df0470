import { QueueServiceClient } from '@azure/storage-queue';

import type { BindingIo } from '../bindings/bindingIo';
import type { Invoker } from '../core/invoker';
import type { FunctionMetadata } from '../core/types';
import { QueueListener } from '../triggers/queueTrigger';
import { until } from '../../test/support/waits';
import { storageConnection, uniqueName } from './support';

// The queue stays empty, so the function is never invoked: these stand-ins only fill the options.
const neverInvoked = {
  invoke: () => Promise.reject(new Error('an empty queue invoked the function')),
} as unknown as Invoker;
const noBindings = {} as unknown as BindingIo;

/**
 * A sleep that records the back-off the listener chose and ends at once, until the one at `holdAt` (by
 * count): from there on a sleep ends only when the listener is woken. Nothing here measures time.
 */
function recordingSleep(holdAt: number) {
  const chosen: number[] = [];
  let woke = false;
  const sleep = (ms: number, woken: AbortSignal): Promise<void> => {
    chosen.push(ms);
    if (chosen.length < holdAt) return Promise.resolve();
    return new Promise<void>((resolve) =>
      woken.addEventListener(
        'abort',
        () => {
          woke ||= chosen.length === holdAt;
          resolve();
        },
        { once: true },
      ),
    );
  };
  return { sleep, chosen, woke: () => woke };
}

describe('storage-queue polling back-off on Azurite', () => {
  const maxPollingIntervalMs = 800;

  test('empty polls back off from ~100 ms, doubling, up to maxPollingInterval; a write wakes the listener and resets it', async () => {
    const queue = QueueServiceClient.fromConnectionString(storageConnection()).getQueueClient(uniqueName('idle'));
    await queue.createIfNotExists();
    let receives = 0;
    const receive = queue.receiveMessages.bind(queue);
    queue.receiveMessages = (options) => {
      receives++;
      return receive(options);
    };
    // The seventh sleep is at the cap and, like every one after it, ends only when the listener is woken.
    const holdAt = 7;
    const sleeps = recordingSleep(holdAt);
    const listener = new QueueListener({
      fn: { name: 'idle' } as FunctionMetadata,
      triggerName: 'message',
      queueName: queue.name,
      queue,
      poison: () => Promise.reject(new Error('nothing should be poisoned')),
      settings: {
        batchSize: 16,
        newBatchThreshold: 8,
        maxPollingIntervalMs,
        visibilityTimeoutMs: 0,
        maxDequeueCount: 5,
        messageEncoding: 'base64',
      },
      invoker: neverInvoked,
      bindings: noBindings,
      log: () => undefined,
      sleep: sleeps.sleep,
    });
    listener.start();
    try {
      await until('the listener to sleep at the cap', () => (sleeps.chosen.length >= holdAt ? true : undefined), { everyMs: 10 });
      // 100, 200, 400 ms (±20% jitter), then the cap, which the jitter never passes (640–800 ms).
      const bounds = [100, 200, 400, 800, 800, 800, 800].map((ms) => [0.8 * ms, Math.min(1.2 * ms, maxPollingIntervalMs)]);
      expect(sleeps.chosen.map((ms, i) => ms >= bounds[i]![0]! && ms <= bounds[i]![1]!)).toEqual(bounds.map(() => true));
      // Asleep at the cap: no receive until it is woken.
      const asleep = receives;
      expect(sleeps.woke()).toBe(false);

      listener.notify();
      await until('a receive after the wake-up', () => (receives > asleep && sleeps.chosen.length > holdAt ? true : undefined), {
        everyMs: 10,
      });
      expect(sleeps.woke()).toBe(true);
      // Woken, it polled at once, and its back-off starts again: reset to 100 ms, then doubled as the
      // interrupted sleep ends, so 160–240 ms rather than the cap's 640–800.
      expect(receives).toBe(asleep + 1);
      expect(sleeps.chosen[holdAt]).toBeGreaterThanOrEqual(160);
      expect(sleeps.chosen[holdAt]).toBeLessThanOrEqual(240);
    } finally {
      await listener.stop();
      await queue.deleteIfExists();
    }
  });
});
