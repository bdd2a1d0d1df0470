/**
 * Cancelling a job on Azurite, in two steps (shared/jobs/submit/cancel.ts): the request marks the job
 * `cancelling` and from that write on its leases are refused and its batches dropped; the background
 * step (the `jobsCancelItems` trigger, run here by the harness) records its open items `cancelled` and
 * completes it. The step is idempotent and resumable: a request delivered again after a step died,
 * or lost altogether (then the reconciler finishes the cancel), ends the same; a forged request for a
 * running job changes nothing.
 */
import { ManualClock } from '../../../shared/clock';
import { isAppError } from '../../../shared/errors';
import { cancelQueueName } from '../../../shared/jobs';
import { declareBody } from '../../../shared/jobs/http/processorSchemas';
import { jobHarness } from '../../support/jobs';

const declare = () => declareBody.parse({ type: 'external', batchSize: 2, leaseSeconds: 30 });
const items = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}` }));

async function refusal(promise: Promise<unknown>): Promise<{ code: string; extra: Record<string, unknown> }> {
  try {
    await promise;
  } catch (err) {
    if (isAppError(err)) return { code: err.code, extra: { ...err.extra } };
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('an asynchronous cancel, on Azurite', () => {
  it('answers with the job cancelling, refuses its leases from then on, and writes its items cancelled in the background', async () => {
    const h = jobHarness();
    await h.jobs.processors.declare('cx', declare());
    const { job } = await h.jobs.submissions.submit({ processor: 'cx', items: items(6, 'c') }, undefined);
    const held = await h.jobs.leases.take('cx', { holder: 'worker', waitSeconds: 0 });
    const done = await h.jobs.leases.take('cx', { holder: 'worker', waitSeconds: 0 });
    await h.jobs.leases.complete(done!.leaseId, [{ id: done!.items[0]!.id, status: 'succeeded', output: 'kept' }]);

    const marked = await h.jobs.cancels.request(job.id);
    expect(marked.cancelledAt).not.toBeNull();
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'cancelling', totals: { succeeded: 1, cancelled: 0, pending: 5 } });
    // Before the background step runs: the held lease is refused, and nothing of the job is leased again.
    expect(await refusal(h.jobs.leases.extend(held!.leaseId))).toMatchObject({ code: 'Conflict', extra: { reason: 'jobCancelled' } });
    expect(await h.jobs.leases.take('cx', { holder: 'worker', waitSeconds: 0 })).toBeUndefined();

    expect(await h.runCancels()).toBe(1);
    expect(await h.jobs.reads.view(job.id)).toMatchObject({
      state: 'cancelled',
      totals: { items: 6, succeeded: 1, cancelled: 5, pending: 0 },
    });
    const results = await h.jobs.reads.results(job.id, 'results', undefined, { maxPageSize: 10 });
    const kept = done!.items[0]!.id;
    expect(results.items.map((r) => [r.id, r.status])).toEqual(items(6, 'c').map((i) => [i.id, i.id === kept ? 'succeeded' : 'cancelled']));
    // Again: the same job, and no second background step.
    expect((await h.jobs.cancels.request(job.id)).phase).toBe('cancelled');
    expect(await h.runCancels()).toBe(0);
  });

  it('refuses the leases of a job cancelled on another instance at once: the one held there, and any new one', async () => {
    // Two instances on the same storage (two apps, as on two hosts): nothing of a cancel is held in memory.
    const a = jobHarness();
    const b = jobHarness({ names: a.names });
    await a.jobs.processors.declare('cw', declare());
    const { job } = await a.jobs.submissions.submit({ processor: 'cw', items: items(6, 'w') }, undefined);
    const heldOnB = await b.jobs.leases.take('cw', { holder: 'worker', waitSeconds: 0 });
    expect(heldOnB?.items).toHaveLength(2);

    expect((await a.jobs.cancels.request(job.id)).cancelledAt).not.toBeNull();
    // Before the background step runs, and on the instance that did not cancel.
    expect(await refusal(b.jobs.leases.extend(heldOnB!.leaseId))).toMatchObject({ code: 'Conflict', extra: { reason: 'jobCancelled' } });
    expect(await b.jobs.leases.take('cw', { holder: 'worker', waitSeconds: 0 })).toBeUndefined();
    expect(await b.jobs.reads.view(job.id)).toMatchObject({ state: 'cancelling', totals: { pending: 6 } });
  });

  it('finishes a cancel whose background step died halfway (the request comes back), and one whose request was lost (the reconciler)', async () => {
    const clock = new ManualClock(Date.now());
    const h = jobHarness({ clock });
    await h.jobs.processors.declare('cy', declare());
    const first = (await h.jobs.submissions.submit({ processor: 'cy', items: items(5, 'a') }, undefined)).job;
    const second = (await h.jobs.submissions.submit({ processor: 'cy', items: items(5, 'b') }, undefined)).job;

    // The first: its step received the request and died before deleting it; the request shows again and finishes it.
    await h.jobs.cancels.request(first.id);
    const requests = await h.queue(cancelQueueName({ queuePrefix: h.names.queuePrefix }));
    const taken = (await requests.receiveMessages({ numberOfMessages: 1, visibilityTimeout: 1 })).receivedMessageItems;
    expect(taken).toHaveLength(1);
    await requests.updateMessage(taken[0]!.messageId, taken[0]!.popReceipt, undefined, 0);
    expect(await h.runCancels()).toBe(1);
    expect(await h.jobs.reads.view(first.id)).toMatchObject({ state: 'cancelled', totals: { cancelled: 5 } });

    // The second: its request never reached a step.
    await h.jobs.cancels.request(second.id);
    await requests.clearMessages();
    expect(await h.jobs.reads.view(second.id)).toMatchObject({ state: 'cancelling' });
    await clock.advance(3_600_000);
    const report = await h.jobs.upkeep.reconcile();
    expect(report.actions.cancelFinished).toBe(1);
    expect(await h.jobs.reads.view(second.id)).toMatchObject({ state: 'cancelled', totals: { cancelled: 5, pending: 0 } });
  });

  it('a cancel request for a job that is not being cancelled (a forged message) changes nothing', async () => {
    const h = jobHarness();
    await h.jobs.processors.declare('cz', declare());
    const { job } = await h.jobs.submissions.submit({ processor: 'cz', items: items(2, 'z') }, undefined);
    expect(await h.jobs.cancels.onRequest(JSON.stringify({ job: job.id }))).toEqual({ job: job.id, cancelled: 0 });
    expect(await h.jobs.cancels.onRequest('not json')).toEqual({ job: undefined, cancelled: 0 });
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'accepted', totals: { pending: 2, cancelled: 0 } });
    expect((await h.jobs.leases.take('cz', { holder: 'worker', waitSeconds: 0 }))?.items).toHaveLength(2);
  });
});
