/**
 * Retries and leases that ran out come back on time however long the backlog, on Azurite. Azurite
 * hands queue messages out in the order they became visible (its `getMessages` sorts by
 * `timeNextVisible`, as Azure Storage does), so a batch made visible again after a back-off in the
 * processor's own queue would wait behind every envelope queued before it. Before the retry lane,
 * both checks here failed: the first lease taken once the retry was due was a backlog item, and the
 * retried item came back only after all of the backlog.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import type { QueueClient } from '@azure/storage-queue';

import { declareBody } from '../../../shared/jobs/http/processorSchemas';
import { jobHarness } from '../../support/jobs';

const backlog = 40;
const pollMs = 200;

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `b-${String(i).padStart(3, '0')}` }));

/**
 * Waits until a message of `queue` is visible (what a lease request could receive), for at most
 * `within` ms: without a lane nothing ever shows there, and the lease taken next tells why.
 */
async function visibleIn(queue: QueueClient, within: number): Promise<void> {
  const end = Date.now() + within;
  while (Date.now() < end && (await queue.peekMessages()).peekedMessageItems.length === 0) await sleep(100);
  // The promise is "within one poll interval of due": an instance looks at a lane it found empty at least once per interval.
  await sleep(pollMs);
}

describe('the retry lane of a declared processor, on Azurite', () => {
  it('hands out a retried item once its back-off is over, and a batch whose lease ran out once it ended, ahead of a backlog of 40 envelopes', async () => {
    const h = jobHarness({ settings: { leasePollMaxMs: pollMs } });
    await h.jobs.processors.declare(
      'busy',
      declareBody.parse({
        type: 'external',
        batchSize: 1,
        leaseSeconds: 5,
        maxAttempts: 3,
        retry: { delaySeconds: 1, multiplier: 1, maxDelaySeconds: 1 },
      }),
    );
    const { job } = await h.jobs.submissions.submit({ processor: 'busy', items: items(backlog) }, undefined);
    expect(job.envelopes).toBe(backlog);

    // The first item fails retryably (back-off 1 s); the second is leased and let run out (5 s lease).
    const failing = await h.jobs.leases.take('busy', { holder: 'worker', waitSeconds: 0 });
    const abandoned = await h.jobs.leases.take('busy', { holder: 'worker', waitSeconds: 0 });
    expect(failing?.items.map((i) => [i.id, i.attempt])).toEqual([['b-000', 1]]);
    expect(abandoned?.items.map((i) => i.id)).toEqual(['b-001']);
    await h.jobs.leases.complete(failing!.leaseId, [{ id: 'b-000', status: 'retry', reason: 'upstream busy' }]);
    const lane = await h.queue(`${h.names.queuePrefix}-r-busy`);

    await visibleIn(lane, 5000);
    // Due: the next lease is the retried item at its next attempt, with 38 envelopes still queued.
    const retried = await h.jobs.leases.take('busy', { holder: 'worker', waitSeconds: 0 });
    expect(retried?.items.map((i) => [i.id, i.attempt])).toEqual([['b-000', 2]]);
    await h.jobs.leases.complete(retried!.leaseId, [{ id: 'b-000', status: 'succeeded', output: 'late' }]);

    await visibleIn(lane, 10_000);
    // The lease ran out unused: its batch comes back next, at the attempt it was at (no worker used it).
    const back = await h.jobs.leases.take('busy', { holder: 'worker', waitSeconds: 0 });
    expect(back?.items.map((i) => [i.id, i.attempt])).toEqual([['b-001', 1]]);
    await h.jobs.leases.complete(back!.leaseId, [{ id: 'b-001', status: 'succeeded' }]);

    // The backlog, untouched so far, drains; every item has one result.
    const rest: string[] = [];
    for (;;) {
      const lease = await h.jobs.leases.take('busy', { holder: 'worker', waitSeconds: 0 });
      if (lease === undefined) break;
      rest.push(...lease.items.map((i) => i.id));
      await h.jobs.leases.complete(
        lease.leaseId,
        lease.items.map((i) => ({ id: i.id, status: 'succeeded' as const })),
      );
    }
    expect(rest.sort()).toEqual(
      items(backlog)
        .slice(2)
        .map((i) => i.id),
    );
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'completed', totals: { items: backlog, succeeded: backlog } });
  });

  it('hands out no retry of a cancelled job: its batch waiting in the lane is dropped when it falls due', async () => {
    const h = jobHarness({ settings: { leasePollMaxMs: pollMs } });
    await h.jobs.processors.declare(
      'gone',
      declareBody.parse({ type: 'external', batchSize: 1, retry: { delaySeconds: 1, multiplier: 1, maxDelaySeconds: 1 } }),
    );
    const { job } = await h.jobs.submissions.submit({ processor: 'gone', items: items(2) }, undefined);
    const first = await h.jobs.leases.take('gone', { holder: 'worker', waitSeconds: 0 });
    await h.jobs.leases.complete(first!.leaseId, [{ id: first!.items[0]!.id, status: 'retry', reason: 'later' }]);
    await h.cancel(job.id);
    const lane = await h.queue(`${h.names.queuePrefix}-r-gone`);
    await visibleIn(lane, 5000);
    expect(await h.jobs.leases.take('gone', { holder: 'worker', waitSeconds: 0 })).toBeUndefined();
    // Dropped, not left to come back: the lane is empty.
    expect((await lane.getProperties()).approximateMessagesCount).toBe(0);
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'cancelled', totals: { items: 2, cancelled: 2 } });
  });
});
