/**
 * Which deliveries of a declared processor's batch count as attempts, on Azurite (the queue's own
 * visibility timeouts, so these tests wait out real 5 s leases): a batch handed to a long poll whose
 * caller had gone — the server cannot tell, see ledger/leaseLog.ts — is not an attempt; a batch a
 * worker used (extended or completed) is. And a completion sent again is answered with the first
 * report, whatever the repeat says.
 */
import { declareBody } from '../../../shared/jobs/http/processorSchemas';
import { jobHarness } from '../../support/jobs';

const declare = (overrides: Record<string, unknown> = {}) =>
  declareBody.parse({
    type: 'external',
    batchSize: 1,
    leaseSeconds: 5,
    maxAttempts: 2,
    retry: { delaySeconds: 0, multiplier: 1, maxDelaySeconds: 0 },
    ...overrides,
  });

const items = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}` }));

describe('deliveries of a declared processor, on Azurite', () => {
  it('three abandoned polls, then a job with maxAttempts 2: every item succeeds at attempt 1 (before: attempt 3, noResult)', async () => {
    const h = jobHarness();
    await h.jobs.processors.declare('gone', declare());
    const { job } = await h.jobs.submissions.submit({ processor: 'gone', items: items(2, 'g') }, undefined);
    // Three lease requests whose callers left: each takes a batch that no one reads, uses or completes.
    const abandoned = [
      await h.jobs.leases.take('gone', { holder: 'worker', waitSeconds: 0 }),
      await h.jobs.leases.take('gone', { holder: 'worker', waitSeconds: 0 }),
    ];
    expect(abandoned.map((l) => l?.items.map((i) => [i.id, i.attempt]))).toEqual([[['g-0', 1]], [['g-1', 1]]]);
    const third = await h.jobs.leases.take('gone', { holder: 'worker', waitSeconds: 20 });
    expect(third?.items.map((i) => [i.id, i.attempt])).toEqual([['g-0', 1]]);
    // A worker now: each item comes back at the attempt it was at.
    const seen: [string, number][] = [];
    for (let n = 0; n < 2; n++) {
      const lease = await h.jobs.leases.take('gone', { holder: 'worker', waitSeconds: 20 });
      expect(lease).toBeDefined();
      seen.push(...lease!.items.map((i): [string, number] => [i.id, i.attempt]));
      await h.jobs.leases.complete(
        lease!.leaseId,
        lease!.items.map((i) => ({ id: i.id, status: 'succeeded' as const })),
      );
    }
    expect(seen.sort()).toEqual([
      ['g-0', 1],
      ['g-1', 1],
    ]);
    const results = await h.jobs.reads.results(job.id, 'results', undefined, { maxPageSize: 10 });
    expect(results.items.map((r) => [r.id, r.status, r.attempts])).toEqual([
      ['g-0', 'succeeded', 1],
      ['g-1', 'succeeded', 1],
    ]);
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'completed', totals: { succeeded: 2, failed: 0 } });
  });

  it('counts a delivery a worker used: extended and let run out, it comes back as the next attempt, and past maxAttempts fails noResult', async () => {
    const h = jobHarness();
    await h.jobs.processors.declare('used', declare());
    const { job } = await h.jobs.submissions.submit({ processor: 'used', items: items(1, 'u') }, undefined);
    const first = await h.jobs.leases.take('used', { holder: 'worker', waitSeconds: 0 });
    await h.jobs.leases.extend(first!.leaseId);
    const second = await h.jobs.leases.take('used', { holder: 'worker', waitSeconds: 20 });
    expect(second?.items.map((i) => [i.id, i.attempt])).toEqual([['u-0', 2]]);
    await h.jobs.leases.extend(second!.leaseId);
    // Its third delivery is past maxAttempts 2: the item fails with why, and nothing is leased.
    expect(await h.jobs.leases.take('used', { holder: 'worker', waitSeconds: 20 })).toBeUndefined();
    const failures = await h.jobs.reads.results(job.id, 'failures', 'failed', { maxPageSize: 10 });
    expect(failures.items.map((f) => [f.id, f.code, f.attempts])).toEqual([['u-0', 'noResult', 2]]);
  });

  it('answers a completion sent again with the first report (not "lease lost"), recording nothing twice and bringing a retry back once', async () => {
    const h = jobHarness();
    await h.jobs.processors.declare('twice', declare({ batchSize: 3, leaseSeconds: 30, maxAttempts: 3 }));
    const { job } = await h.jobs.submissions.submit({ processor: 'twice', items: items(3, 't') }, undefined);
    const lease = await h.jobs.leases.take('twice', { holder: 'worker', waitSeconds: 0 });
    const verdicts = [
      { id: 't-0', status: 'succeeded' as const, output: 'first' },
      { id: 't-1', status: 'retry' as const, reason: 'busy' },
      { id: 't-2', status: 'failed' as const, code: 'bad', reason: 'no' },
    ];
    const report = await h.jobs.leases.complete(lease!.leaseId, verdicts);
    expect(report).toEqual({ recorded: 2, alreadyFinal: 0, retrying: 1, jobFinished: false });
    // Again, and again with other verdicts: the first report each time; the first outputs stand.
    expect(await h.jobs.leases.complete(lease!.leaseId, verdicts)).toEqual(report);
    expect(await h.jobs.leases.complete(lease!.leaseId, [{ id: 't-0', status: 'succeeded', output: 'second' }])).toEqual(report);
    const again = await h.jobs.leases.take('twice', { holder: 'worker', waitSeconds: 20 });
    expect(again?.items.map((i) => [i.id, i.attempt])).toEqual([['t-1', 2]]);
    expect(await h.jobs.leases.take('twice', { holder: 'worker', waitSeconds: 0 })).toBeUndefined();
    const done = await h.jobs.leases.complete(again!.leaseId, [{ id: 't-1', status: 'succeeded' }]);
    expect(done).toEqual({ recorded: 1, alreadyFinal: 0, retrying: 0, jobFinished: true });
    expect(await h.jobs.leases.complete(again!.leaseId, [])).toEqual(done);
    const results = await h.jobs.reads.results(job.id, 'results', undefined, { maxPageSize: 10 });
    expect(results.items.map((r) => [r.id, r.status, r.attempts, r.output ?? null])).toEqual([
      ['t-0', 'succeeded', 1, 'first'],
      ['t-1', 'succeeded', 2, null],
      ['t-2', 'failed', 1, null],
    ]);
    expect(await h.stores.results.progress(job.id)).toMatchObject({ succeeded: 2, failed: 1 });
  });
});
