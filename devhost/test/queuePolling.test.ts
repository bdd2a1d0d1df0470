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

interface Receive {
  started: number;
  ended: number;
}

// The time the listener slept between two receives: from one receive's answer to the next receive's
// start. Azurite's round trip is left out, so a loaded machine (CI runs the real host alongside)
// cannot stretch a 100 ms back-off into one that looks like the cap.
const sleeps = (receives: readonly Receive[]): number[] =>
  receives.slice(1).map((r, i) => r.started - (receives[i] as Receive).ended);

describe('storage-queue polling back-off on Azurite', () => {
  const maxPollingIntervalMs = 800;

  test('empty polls back off from ~100 ms, doubling, up to maxPollingInterval; a write resets it', async () => {
    const queue = QueueServiceClient.fromConnectionString(storageConnection()).getQueueClient(uniqueName('idle'));
    await queue.createIfNotExists();
    const receives: Receive[] = [];
    const receive = queue.receiveMessages.bind(queue);
    queue.receiveMessages = async (options) => {
      const entry = { started: Date.now(), ended: Number.NaN };
      receives.push(entry);
      try {
        return await receive(options);
      } finally {
        entry.ended = Date.now();
      }
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
      const idle = sleeps(receives.filter((r) => !Number.isNaN(r.ended)));
      // 100, 200, 400 ms (±20% jitter), then 640–800 ms: the jitter still applies at the cap, which it
      // never passes. The upper bounds leave room for a late timer on a busy machine and stay far from
      // what a wrong back-off would show (starting at the cap: ≥ 640 ms; no cap: 1,600 ms).
      expect(idle[0]).toBeLessThan(400);
      expect(idle[2]).toBeGreaterThanOrEqual(0.8 * 400 - 5);
      expect(Math.max(...idle)).toBeLessThan(maxPollingIntervalMs + 400);
      expect(idle.at(-1)).toBeGreaterThanOrEqual(0.8 * maxPollingIntervalMs - 5);

      const before = receives.length;
      const notifiedAt = Date.now();
      listener.notify();
      // Two receives after the wake-up, however slow Azurite answers (the test's timeout bounds it).
      while (receives.length < before + 2) await new Promise((r) => setTimeout(r, 50));
      const after = receives.slice(before);
      // Woken at once, and polling again after 160–240 ms (reset to 100 ms, then doubled as the
      // interrupted sleep ends) rather than 640–800.
      expect((after[0] as Receive).started - notifiedAt).toBeLessThan(400);
      expect(sleeps(after)[0]).toBeLessThan(400);
    } finally {
      await listener.stop();
      await queue.deleteIfExists();
    }
  });
});
