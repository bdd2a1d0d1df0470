/**
 * The job use-cases on Azurite, delivered by the harness's host-like `drain`: a job completes with
 * totals equal to an independent computation, invalid items fail with their reasons, redelivered
 * and duplicated envelopes change nothing, and progress stays exact.
 */
import { expectedTotals, invoiceTotals, transactions } from '../../support/billing';
import { jobHarness } from '../../support/jobs';

async function invoice(h: ReturnType<typeof jobHarness>, id: string): Promise<string> {
  return (await h.jobs.reads.file(id, 'invoice.csv')).body.toString('utf8');
}

// Azurite is real; Service Bus cannot run here, so the JobCompleted event goes to the harness's fake sender.
describe('job processing on Azurite, with a fake Service Bus sender for the completion event', () => {
  it('completes a job: every item once, totals equal to an independent computation, one event on the fake Service Bus sender', async () => {
    const h = jobHarness({ settings: { queues: 3 } });
    const items = transactions(1000, 11);
    const { job } = await h.jobs.submissions.submit({ processor: 'billing', items }, undefined);
    expect(job).toMatchObject({ phase: 'enqueued', items: 1000, envelopes: Math.ceil(1000 / 32), cursor: Math.ceil(1000 / 32) });
    const queued = await h.messages();
    expect(h.queueNames.every((q) => (queued.get(q)?.length ?? 0) > 0)).toBe(true);

    const report = await h.drain();
    expect(report).toMatchObject({ delivered: job.envelopes, failures: 0, poisoned: 0 });
    const view = await h.jobs.reads.view(job.id);
    expect(view).toMatchObject({ state: 'completed', totals: { items: 1000, succeeded: 1000, failed: 0, pending: 0 }, event: 'published' });
    expect(view.timings.completedAt).not.toBeNull();
    expect(invoiceTotals(await invoice(h, job.id))).toEqual(expectedTotals(items));
    expect(h.events.sent.map((m) => m.messageId)).toEqual([`${job.id}:0:completed`]);
    const results = (await h.rows('results')).filter((r) => String(r.rowKey).startsWith('r|'));
    expect(results).toHaveLength(1000);
    expect((await h.rows('jobs')).filter((r) => r.partitionKey === 'open')).toEqual([]);
  });

  it('records invalid items as failed with their reasons and completes with failures', async () => {
    const h = jobHarness();
    const items = [
      ...transactions(60, 3),
      { ...transactions(1, 4, 'bad')[0]!, id: 'bad-float', amountMinor: 12.5 },
      { ...transactions(1, 5, 'bad')[0]!, id: 'bad-currency', currency: 'EURO' },
      { ...transactions(1, 6, 'bad')[0]!, id: 'bad-category', taxCategory: 'luxury' },
    ];
    const { job } = await h.jobs.submissions.submit({ processor: 'billing', items }, undefined);
    await h.drain();
    const view = await h.jobs.reads.view(job.id);
    expect(view).toMatchObject({ state: 'completedWithFailures', totals: { succeeded: 60, failed: 3 } });
    const failures = await h.jobs.reads.results(job.id, 'failures', 'failed', { maxPageSize: 10 });
    expect(failures.items.map((f) => [f.id, f.code, f.attempts])).toEqual([
      ['bad-category', 'unknownTaxCategory', 1],
      ['bad-currency', 'invalid', 1],
      ['bad-float', 'invalid', 1],
    ]);
    expect(failures.items.map((f) => f.reason)).toEqual([
      expect.stringMatching(/taxCategory: "luxury" is not in the rate table/),
      expect.stringMatching(/currency: is not an accepted ISO 4217/),
      expect.stringMatching(/amountMinor: must be an integer/),
    ]);
    expect(invoiceTotals(await invoice(h, job.id))).toEqual(expectedTotals(items.slice(0, 60)));
  });

  it('a redelivered or duplicated envelope (also concurrently) changes no result, no count, no total, and sends one event to the fake Service Bus sender', async () => {
    const h = jobHarness({ settings: { queues: 1 } });
    const items = transactions(200, 21);
    const { job } = await h.jobs.submissions.submit({ processor: 'billing', items }, undefined);
    const texts = (await h.messages()).get(h.queueNames[0]!) ?? [];
    expect(texts).toHaveLength(7);
    // Deliver the first envelope three times at once and once more later, before the queue drains.
    const first = texts[0]!;
    const reports = await Promise.all([1, 1, 2].map((dequeueCount) => h.jobs.work.process(first, { dequeueCount })));
    expect(reports.reduce((n, r) => n + r.recorded, 0)).toBe(32);
    expect(await h.stores.results.progress(job.id)).toMatchObject({ succeeded: 32, failed: 0 });
    await h.drain();
    const again = await h.jobs.work.process(first, { dequeueCount: 1 });
    expect(again).toMatchObject({ recorded: 0, alreadyFinal: 32, jobFinished: true });
    expect(await h.stores.results.progress(job.id)).toMatchObject({ succeeded: 200, failed: 0 });
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'completed', totals: { succeeded: 200, failed: 0, pending: 0 } });
    expect(invoiceTotals(await invoice(h, job.id))).toEqual(expectedTotals(items));
    expect(h.events.sent).toHaveLength(1);
  });
});
