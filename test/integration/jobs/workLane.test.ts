/**
 * The in-app processors' retry lanes, on Azurite. A work queue's trigger reads it in the order its
 * messages became visible (Azurite's `getMessages` sorts by `timeNextVisible`, as Azure Storage
 * does), so a retry sent back to the work queue after its back-off waited behind every envelope
 * queued before it. Retries now go to the queue's lane (`<prefix>-r-<n>`), which a trigger of its
 * own reads: here, as the host does, each queue has its own listener. Before the lane this failed:
 * the retried item came back only after all 39 other envelopes.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import type { QueueClient } from '@azure/storage-queue';

import type { JsonObject } from '../../../shared/jobs/envelopes/envelope';
import type { JobProcessor } from '../../../shared/jobs/processors/processor';
import { transactions } from '../../support/billing';
import { jobHarness } from '../../support/jobs';

const backlog = 40;

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `w-${String(i).padStart(3, '0')}` }));

const decode = (text: string): string => Buffer.from(text, 'base64').toString('utf8');

describe('the retry lane of the in-app work queues, on Azurite', () => {
  it('processes an item whose processor threw once its back-off is over, ahead of a backlog of 39 envelopes', async () => {
    /** What the processor was given, in order: [item id, attempt]. */
    const seen: [string, number][] = [];
    let crashing: string | undefined;
    const processor: JobProcessor = {
      name: 'flaky',
      processItem: (item: JsonObject, { attempt }) => {
        const id = typeof item.id === 'string' ? item.id : JSON.stringify(item.id);
        seen.push([id, attempt]);
        crashing ??= id;
        // The first item it sees crashes its first attempt (a throw is retried, as docs/jobs.md says).
        if (id === crashing && attempt === 1) return Promise.reject(new Error('downstream went away'));
        return Promise.resolve({ ok: true, output: { id } });
      },
      finalize: () => Promise.resolve({ files: {}, outputs: 0 }),
    };
    const h = jobHarness({
      processors: [processor],
      settings: { queues: 1, envelopeMaxItems: 1, retryDelaySeconds: 1, maxAttempts: 3 },
    });
    const { job } = await h.jobs.submissions.submit({ processor: 'flaky', items: items(backlog) }, undefined);
    expect(job.envelopes).toBe(backlog);
    const work = await h.queue(h.queueNames[0]!);
    const lane = await h.queue(h.laneNames[0]!);

    /** One poll of a queue's listener: the next visible message, processed and deleted (false when none was visible). */
    const poll = async (queue: QueueClient): Promise<boolean> => {
      const [m] = (await queue.receiveMessages({ numberOfMessages: 1, visibilityTimeout: 60 })).receivedMessageItems;
      if (m === undefined) return false;
      await h.jobs.work.onMessage(decode(m.messageText), { dequeueCount: m.dequeueCount });
      await queue.deleteMessage(m.messageId, m.popReceipt);
      return true;
    };

    expect(await poll(work)).toBe(true);
    expect(seen).toEqual([[crashing, 1]]);
    // The retry was sent (visible after its 1 s back-off) before that poll returned: it is due after this.
    await sleep(1100);

    // The two listeners, each polling its own queue: the lane's is served next, ahead of the work queue's backlog.
    while (!seen.some(([id, attempt]) => id === crashing && attempt === 2)) {
      const polled = await Promise.all([poll(lane), poll(work)]);
      if (!polled.includes(true)) break;
    }
    expect(seen.findIndex(([id, attempt]) => id === crashing && attempt === 2)).toBeLessThanOrEqual(2);
    expect((await work.getProperties()).approximateMessagesCount).toBeGreaterThanOrEqual(backlog - 2);

    // The rest drains; every item has one result and the crashed one took two attempts.
    expect(await h.drain()).toMatchObject({ failures: 0, poisoned: 0 });
    expect(await h.jobs.reads.job(job.id)).toMatchObject({ phase: 'completed', items: backlog, succeeded: backlog, failed: 0 });
    expect(seen.filter(([id]) => id === crashing)).toEqual([
      [crashing, 1],
      [crashing, 2],
    ]);
  });

  it('moves an envelope that failed as a whole from the work queue to its lane, due after the back-off, ahead of the backlog', async () => {
    const h = jobHarness({ settings: { queues: 1, envelopeMaxItems: 1, retryDelaySeconds: 1 } });
    const big = { ...transactions(1, 3, 'big')[0]!, id: 'big', metadata: { blob: 'b'.repeat(20_000) } };
    const crashing = await h.jobs.submissions.submit({ processor: 'billing', items: [big] }, undefined);
    // Its input goes missing: the claim check cannot be redeemed, the whole envelope fails.
    const container = await h.container();
    for (const name of await h.blobs()) if (name.startsWith(`${crashing.job.id}/input`)) await container.deleteBlob(name);
    await h.jobs.submissions.submit({ processor: 'billing', items: transactions(39, 5, 'o') }, undefined);
    const work = await h.queue(h.queueNames[0]!);
    const lane = await h.queue(h.laneNames[0]!);

    const [first] = (await work.receiveMessages({ numberOfMessages: 1, visibilityTimeout: 60 })).receivedMessageItems;
    const delivery = { dequeueCount: first!.dequeueCount, lane: h.laneNames[0]! };
    // Before the lanes it was thrown, and the host made it visible again behind the 39 others.
    expect(await h.jobs.work.onMessage(decode(first!.messageText), delivery)).toMatchObject({
      movedTo: h.laneNames[0],
      reason: expect.stringContaining('Claim check cannot be redeemed'),
    });
    await work.deleteMessage(first!.messageId, first!.popReceipt);

    await sleep(1100);
    const [due] = (await lane.peekMessages()).peekedMessageItems;
    expect(JSON.parse(decode(due!.messageText)).m.j).toBe(crashing.job.id);
    expect((await work.getProperties()).approximateMessagesCount).toBe(39);
    // Delivered again in the lane, it fails again: the host's redelivery there, then the lane's poison queue.
    expect(await h.drain({ maxDequeueCount: 2 })).toMatchObject({ failures: 2, poisoned: 1 });
    expect((await h.jobs.reads.results(crashing.job.id, 'failures', 'failed', { maxPageSize: 10 })).items).toMatchObject([
      { id: 'big', code: 'poisoned', reason: expect.stringMatching(/^The envelope failed 3 deliveries and reached .*-r-0-poison; /) },
    ]);
  });
});
