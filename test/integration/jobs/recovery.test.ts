/**
 * Crashes at the awkward points, on Azurite (a fault proxy makes storage fail where needed, a
 * manual clock makes leases run out): an interrupted enqueue is finished by the resubmission or by
 * the reconciler without losing or double-counting anything; a worker that dies after recording
 * leaves a redelivery to complete the job; a finalizer that dies leaves the job to the reconciler;
 * the completion event goes out once, and a republish carries the same message id.
 */
import { codeOf } from '../../support/appErrors';
import { expectedTotals, invoiceTotals, transactions } from '../../support/billing';
import { testClock } from '../../support/clocks';
import { type FaultProxy, startFaultProxy } from '../../support/faultProxy';
import { jobHarness, jobNames } from '../../support/jobs';
import { runStorage } from '../../support/storageAccounts';

/** Envelope ids waiting in the work queues, duplicates included: every message is held, read, then released. */
async function queued(h: ReturnType<typeof jobHarness>): Promise<string[]> {
  const out: string[] = [];
  for (const q of h.queueNames) {
    const client = await h.queue(q);
    const held: { messageId: string; popReceipt: string }[] = [];
    for (;;) {
      const batch = (await client.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 30 })).receivedMessageItems;
      if (batch.length === 0) break;
      for (const m of batch) {
        // A sealed envelope: `{"s": MAC, "m": envelope}`.
        out.push((JSON.parse(Buffer.from(m.messageText, 'base64').toString('utf8')) as { m: { e: string } }).m.e);
        held.push(m);
      }
    }
    for (const m of held) await client.updateMessage(m.messageId, m.popReceipt, undefined, 0);
  }
  return out.sort();
}

/**
 * Storage of the harness that "dies": it must die of the injected fault and of nothing else. The
 * fault holds until the test lifts it, so the client's retries meet it every time and the invocation
 * fails there; any other failure on the way (a dropped connection through the proxy, a slow answer)
 * is retried as in production, with a long timeout. With one try and no retry, runs died earlier than
 * meant: on a loaded machine before any result was in (a request timing out at 5 s), and once on a
 * quiet CI machine before the submission had written anything, so the reconciler had nothing to visit
 * (it lists every row of the jobs' `open` index, which the submission writes first).
 */
const dies = { retry: { maxTries: 3, tryTimeoutMs: 30_000 } };

// Azurite is real; Service Bus cannot run here, so the JobCompleted event goes to the harness's fake sender.
describe('job recovery on Azurite, with a fake Service Bus sender for the completion event', () => {
  let proxy: FaultProxy;
  beforeAll(async () => {
    proxy = await startFaultProxy(runStorage());
  });
  afterAll(async () => {
    await proxy.close();
  });
  afterEach(() => proxy.setRules());

  it('a submission that dies mid-enqueue is finished by its resubmission (same key) once the lease runs out: every envelope once, at most one batch twice', async () => {
    const clock = testClock(Date.now());
    const names = jobNames();
    const settings = { queues: 1, enqueueParallelism: 8 };
    const crashing = jobHarness({
      names,
      clock,
      settings,
      connection: proxy.connectionString,
      storage: dies,
    });
    const healthy = jobHarness({ names, clock, settings });
    let sends = 0;
    proxy.setRules((r) => (r.service === 'queue' && r.method === 'POST' && ++sends > 20 ? { kind: 'refuse' } : undefined));
    const items = transactions(1000, 31);
    expect(await codeOf(crashing.jobs.submissions.submit({ processor: 'billing', items }, 'batch-7'))).toBe('DependencyUnavailable');
    proxy.setRules();

    const stranded = await healthy.jobs.reads.view(
      (await healthy.stores.jobs.read((await healthy.rows('jobs')).find((r) => r.rowKey === 'job')!.partitionKey as string))!.job.id,
    );
    expect(stranded).toMatchObject({ state: 'accepted', envelopes: { count: 32, sent: 16 } });
    // Within the lease the resubmission leaves the enqueue to its owner (who might still be alive).
    const early = await healthy.jobs.submissions.submit({ processor: 'billing', items }, 'batch-7');
    expect(early).toMatchObject({ replayed: true, job: { id: stranded.id, phase: 'enqueuing', cursor: 16 } });
    await clock.advance(16_000);
    const resumed = await healthy.jobs.submissions.submit({ processor: 'billing', items }, 'batch-7');
    expect(resumed).toMatchObject({ replayed: true, job: { id: stranded.id, phase: 'enqueued', cursor: 32 } });

    const envelopes = await queued(healthy);
    const distinct = new Set(envelopes);
    expect(distinct.size).toBe(32);
    expect(envelopes.length - distinct.size).toBeLessThanOrEqual(settings.enqueueParallelism);
    await healthy.drain();
    const view = await healthy.jobs.reads.view(stranded.id);
    expect(view).toMatchObject({ state: 'completed', totals: { succeeded: 1000, failed: 0 } });
    expect(invoiceTotals((await healthy.jobs.reads.file(stranded.id, 'invoice.csv')).body.toString())).toEqual(expectedTotals(items));
    expect(healthy.events.sent).toHaveLength(1);
  });

  it('a submission that dies before any envelope is sent is enqueued by the reconciler after the lease, exactly once', async () => {
    const clock = testClock(Date.now());
    const names = jobNames();
    const crashing = jobHarness({
      names,
      clock,
      connection: proxy.connectionString,
      storage: dies,
    });
    const healthy = jobHarness({ names, clock });
    proxy.setRules((r) => (r.service === 'queue' && r.method === 'POST' ? { kind: 'status', status: 500 } : undefined));
    const items = transactions(300, 33);
    const faultedBefore = proxy.counts.queue.faulted;
    expect(await codeOf(crashing.jobs.submissions.submit({ processor: 'billing', items }, undefined))).toBe('DependencyUnavailable');
    proxy.setRules();
    // It died where meant: at its first sends, after the index entry and the job row were written.
    expect(proxy.counts.queue.faulted).toBeGreaterThan(faultedBefore);
    const rows = await healthy.rows('jobs');
    expect(rows.filter((r) => r.partitionKey === 'open')).toHaveLength(1);
    expect(rows.find((r) => r.rowKey === 'job')).toMatchObject({ phase: 'enqueuing', cursor: 0 });
    expect(await queued(healthy)).toEqual([]);
    expect(await healthy.jobs.upkeep.reconcile()).toMatchObject({ visited: 1, actions: { none: 1 } });
    await clock.advance(16_000);
    // Seen once in a loaded run: this reconcile found nothing to do. The job row as it was then goes
    // with the failure, so the next occurrence names its cause (a lease still running, or a lost race).
    const before = (await healthy.rows('jobs')).find((r) => r.rowKey === 'job');
    const report = await healthy.jobs.upkeep.reconcile();
    if (report.actions.enqueueResumed !== 1)
      throw new Error(`The reconcile after the lease did not resume: ${JSON.stringify({ report, now: clock.now(), row: before })}`);
    expect(report).toMatchObject({ visited: 1, actions: { enqueueResumed: 1 } });
    const envelopes = await queued(healthy);
    expect(envelopes).toHaveLength(10);
    expect(new Set(envelopes).size).toBe(10);
    await healthy.drain();
    const jobRow = (await healthy.rows('jobs')).find((r) => r.rowKey === 'job');
    expect(await healthy.jobs.reads.view(String(jobRow?.partitionKey))).toMatchObject({ state: 'completed', totals: { succeeded: 300 } });
    expect(await healthy.jobs.upkeep.reconcile()).toMatchObject({ visited: 0 });
  });

  it('a worker that records its results and dies before the completion check leaves the redelivery to complete the job', async () => {
    const names = jobNames();
    const flaky = jobHarness({
      names,
      settings: { queues: 1 },
      connection: proxy.connectionString,
      storage: dies,
    });
    const healthy = jobHarness({ names, settings: { queues: 1 } });
    const items = transactions(40, 35);
    const { job } = await healthy.jobs.submissions.submit({ processor: 'billing', items }, undefined);
    const [first, second] = (await healthy.messages()).get(healthy.queueNames[0]!) ?? [];
    await healthy.jobs.work.process(first!, { dequeueCount: 1 });
    // The tally query after the commit fails: the invocation throws after its results are in.
    proxy.setRules((r) =>
      r.service === 'table' && r.method === 'GET' && decodeURIComponent(r.path).includes("RowKey ge 't|'") ? { kind: 'refuse' } : undefined,
    );
    const refusedBefore = proxy.counts.table.faulted;
    expect(await codeOf(flaky.jobs.work.process(second!, { dequeueCount: 1 }))).toBe('DependencyUnavailable');
    proxy.setRules();
    expect(proxy.counts.table.faulted).toBeGreaterThan(refusedBefore);
    expect(await healthy.stores.results.progress(job.id)).toMatchObject({ succeeded: 40 });
    expect((await healthy.jobs.reads.view(job.id)).state).toBe('running');
    const redelivered = await healthy.jobs.work.process(second!, { dequeueCount: 2 });
    expect(redelivered).toMatchObject({ recorded: 0, alreadyFinal: 8, jobFinished: true });
    expect(await healthy.jobs.reads.view(job.id)).toMatchObject({ state: 'completed', totals: { succeeded: 40, failed: 0 } });
    expect(healthy.events.sent).toHaveLength(1);
  });

  it('a finalizer that dies leaves the job finalizing; the reconciler completes it after the stale time, with one event on the fake Service Bus sender', async () => {
    const clock = testClock(Date.now());
    const names = jobNames();
    const flaky = jobHarness({
      names,
      clock,
      settings: { queues: 1, staleSeconds: 60 },
      connection: proxy.connectionString,
      storage: dies,
    });
    const healthy = jobHarness({ names, clock, settings: { queues: 1, staleSeconds: 60 } });
    const items = transactions(20, 37);
    const { job } = await healthy.jobs.submissions.submit({ processor: 'billing', items }, undefined);
    const [only] = (await healthy.messages()).get(healthy.queueNames[0]!) ?? [];
    proxy.setRules((r) => (r.service === 'blob' && r.method === 'PUT' && r.path.includes('/files/') ? { kind: 'refuse' } : undefined));
    expect(await codeOf(flaky.jobs.work.process(only!, { dequeueCount: 1 }))).toBe('DependencyUnavailable');
    proxy.setRules();
    expect((await healthy.stores.jobs.read(job.id))?.job.phase).toBe('finalizing');
    // A redelivery inside the lease leaves it to the (presumed live) finalizer.
    expect(await healthy.jobs.work.process(only!, { dequeueCount: 2 })).toMatchObject({ jobFinished: false });
    expect(await healthy.jobs.upkeep.reconcile()).toMatchObject({ actions: { none: 1 } });
    await clock.advance(61_000);
    expect(await healthy.jobs.upkeep.reconcile()).toMatchObject({ actions: { completed: 1 } });
    expect(await healthy.jobs.reads.view(job.id)).toMatchObject({ state: 'completed', event: 'published' });
    expect(healthy.events.sent.map((m) => m.messageId)).toEqual([`${job.id}:0:completed`]);
  });

  it('concurrent completers finalize once and publish once to the fake Service Bus sender; a failed (injected) publish stays pending until the reconciler sends it, with the same message id', async () => {
    const clock = testClock(Date.now());
    const h = jobHarness({ clock, settings: { queues: 1, staleSeconds: 30 } });
    const items = transactions(64, 39);
    const { job } = await h.jobs.submissions.submit({ processor: 'billing', items }, undefined);
    const texts = (await h.messages()).get(h.queueNames[0]!) ?? [];
    h.events.failNext = 1;
    // Both envelopes and three stray redeliveries race to complete the job.
    const reports = await Promise.all(
      [...texts, ...texts, texts[0]!].map((t, i) => h.jobs.work.process(t, { dequeueCount: i < 2 ? 1 : 2 })),
    );
    expect(reports.reduce((n, r) => n + r.recorded, 0)).toBe(64);
    const stored = await h.stores.jobs.read(job.id);
    expect(stored?.job).toMatchObject({ phase: 'completed', event: 'pending', succeeded: 64, failed: 0 });
    expect(h.events.sent).toEqual([]);
    // Not before the stale time: the finalizer may still be about to publish.
    expect(await h.jobs.upkeep.reconcile()).toMatchObject({ actions: { none: 1 } });
    await clock.advance(31_000);
    expect(await h.jobs.upkeep.reconcile()).toMatchObject({ actions: { published: 1 } });
    expect(await h.jobs.upkeep.reconcile()).toMatchObject({ visited: 0 });
    expect(h.events.sent.map((m) => m.messageId)).toEqual([`${job.id}:0:completed`]);
    expect(h.events.sent[0]?.body).toMatchObject({ type: 'JobCompleted', job: job.id, state: 'completed', succeeded: 64, failed: 0 });
    // A publisher that sent but died before noting it (here: one holding the old ETag) sends again
    // with the same message id, which the topic's duplicate detection drops; its note loses the race.
    const again = await h.jobs.outputs.finish(stored!);
    expect(again.job.event).toBe('published');
    expect(h.events.sent.map((m) => m.messageId)).toEqual([`${job.id}:0:completed`, `${job.id}:0:completed`]);
  });
});
