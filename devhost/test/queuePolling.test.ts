import { QueueServiceClient } from '@azure/storage-queue';

import type { BindingIo } from '../bindings/bindingIo';
import type { Invoker } from '../core/invoker';
import type { FunctionMetadata } from '../core/types';
import { QueueListener } from '../triggers/queueTrigger';
import { storageConnection, uniqueName } from './support';

// The queue stays empty, so the function is never invoked: these stand-ins only fill the options.
const neverInvoked = {
  invoke: () => Promise.reject(new Error('an empty queue invoked the function')),
} as unknown as Invoker;
const noBindings = {} as unknown as BindingIo;

const gaps = (times: readonly number[]): number[] => times.slice(1).map((t, i) => t - (times[i] as number));

describe('storage-queue polling back-off on Azurite', () => {
  const maxPollingIntervalMs = 800;

  test('empty polls back off from ~100 ms, doubling, up to maxPollingInterval; a write resets it', async () => {
    const queue = QueueServiceClient.fromConnectionString(storageConnection()).getQueueClient(uniqueName('idle'));
    await queue.createIfNotExists();
    const receives: number[] = [];
    const receive = queue.receiveMessages.bind(queue);
    queue.receiveMessages = (options) => {
      receives.push(Date.now());
      return receive(options);
    };
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
    });
    listener.start();
    try {
      await new Promise((r) => setTimeout(r, 4000));
      const idle = gaps(receives);
      // 100, 200, 400 ms (±20% jitter), then 640–800 ms: the jitter still applies at the cap, which it
      // never passes. Each gap also holds the receive's own round trip, so the bounds that could be hit
      // by a slow machine are kept far from what a wrong back-off would show (starting at the cap:
      // ≥ 640 ms; no cap: a 1,600 ms gap within these 4 s).
      expect(idle[0]).toBeLessThan(400);
      expect(idle[2]).toBeGreaterThanOrEqual(0.8 * 400 - 5);
      expect(Math.max(...idle)).toBeLessThan(maxPollingIntervalMs + 400);
      expect(idle.at(-1)).toBeGreaterThanOrEqual(0.8 * maxPollingIntervalMs - 5);

      const before = receives.length;
      const notifiedAt = Date.now();
      listener.notify();
      await new Promise((r) => setTimeout(r, 700));
      const after = receives.slice(before);
      // Woken at once, and polling from ~100 ms again rather than 640–800.
      expect((after[0] as number) - notifiedAt).toBeLessThan(400);
      expect(gaps(after)[0]).toBeLessThan(400);
    } finally {
      await listener.stop();
      await queue.deleteIfExists();
    }
  });
});
