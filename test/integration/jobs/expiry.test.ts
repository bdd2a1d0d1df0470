/**
 * Idle jobs expire, on Azurite (shared/jobs/submit/expiry.ts): a job no worker served within its
 * processor's idle limit ends its unfinished items `failed`/`expired`, finishes and gives back its
 * place among TALLYHO_JOBS_MAX_OPEN, while a job a worker served within the limit runs on. The
 * app's clock is a manual one, so "idle for a minute" is a clock advance, not a wait; the judging
 * instance is a second harness on the same storage (nothing of it lives in an instance's memory).
 */
import { ManualClock } from '../../../shared/clock';
import { isAppError } from '../../../shared/errors';
import { declareBody } from '../../../shared/jobs/http/processorSchemas';
import { jobHarness } from '../../support/jobs';

const items = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}` }));

async function refusal(promise: Promise<unknown>): Promise<{ code: string; status: number }> {
  try {
    await promise;
  } catch (err) {
    if (isAppError(err)) return { code: err.code, status: err.status };
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('idle jobs expire, on Azurite', () => {
  it("expires a job no worker served within its processor's limit, keeps a served one, and gives the place back", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const h = jobHarness({ clock, settings: { maxOpen: 2, maxOpenPerOwner: 2 } });
    await h.jobs.processors.declare('ix', declareBody.parse({ type: 'external', batchSize: 10, leaseSeconds: 3600, idleLimitSeconds: 60 }));
    const served = (await h.jobs.submissions.submit({ processor: 'ix', items: items(3, 's') }, undefined, { owner: 'a' })).job;
    const idle = (await h.jobs.submissions.submit({ processor: 'ix', items: items(3, 'i') }, undefined, { owner: 'a' })).job;
    expect(await refusal(h.jobs.submissions.submit({ processor: 'ix', items: items(1, 'x') }, undefined, { owner: 'a' }))).toEqual({
      code: 'TooManyRequests',
      status: 429,
    });

    // A worker takes the first job's batch, and uses its lease 45 s later: served within the limit.
    const lease = await h.jobs.leases.take('ix', { holder: 'worker', waitSeconds: 0 });
    expect(lease?.items.map((i) => i.jobId)).toEqual([served.id, served.id, served.id]);
    await clock.advance(45_000);
    const extended = await h.jobs.leases.extend(lease!.leaseId);
    // The second job's batch is handed out (to a long poll whose caller had gone): no service.
    const unused = await h.jobs.leases.take('ix', { holder: 'gone', waitSeconds: 0 });
    expect(unused?.items.map((i) => i.jobId)).toEqual([idle.id, idle.id, idle.id]);
    await clock.advance(30_000);

    // Another instance (nothing shared but storage) runs the reconciler.
    const other = jobHarness({ clock, names: h.names, settings: { maxOpen: 2, maxOpenPerOwner: 2 } });
    const report = await other.jobs.upkeep.reconcile();
    expect(report.actions.expired).toBe(1);
    expect(await h.jobs.reads.view(idle.id)).toMatchObject({ state: 'completedWithFailures', totals: { items: 3, failed: 3, pending: 0 } });
    const failures = await h.jobs.reads.results(idle.id, 'failures', undefined, { maxPageSize: 10 });
    expect(failures.items.map((r) => [r.id, r.status, r.code])).toEqual(items(3, 'i').map((i) => [i.id, 'failed', 'expired']));
    expect(await h.jobs.reads.view(served.id)).toMatchObject({ state: 'accepted', totals: { pending: 3 } });

    // Its place is back: a new job fits under TALLYHO_JOBS_MAX_OPEN = 2.
    await h.jobs.submissions.submit({ processor: 'ix', items: items(1, 'n') }, undefined, { owner: 'a' });
    // The batch handed out before the expiry completes as already final; the served job's goes on.
    expect(await h.jobs.leases.complete(unused!.leaseId, [{ id: 'i-0', status: 'succeeded', output: 1 }])).toMatchObject({
      recorded: 0,
      alreadyFinal: 1,
    });
    await h.jobs.leases.complete(
      extended.leaseId,
      items(3, 's').map((i) => ({ id: i.id, status: 'succeeded' as const, output: 1 })),
    );
    expect(await h.jobs.reads.view(served.id)).toMatchObject({ state: 'completed', totals: { succeeded: 3 } });
    // Running again expires nothing more (the new job is young).
    expect((await other.jobs.upkeep.reconcile()).actions.expired).toBeUndefined();
  });

  it('a processor that declares no limit uses TALLYHO_JOBS_IDLE_LIMIT_SECONDS, and a result counts as service', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const h = jobHarness({ clock, settings: { idleLimitSeconds: 120 } });
    const declared = await h.jobs.processors.declare('iy', declareBody.parse({ type: 'external', batchSize: 1, leaseSeconds: 3600 }));
    expect(declared.processor.idleLimitSeconds).toBeNull();
    const job = (await h.jobs.submissions.submit({ processor: 'iy', items: items(2, 'y') }, undefined, { owner: 'b' })).job;
    await clock.advance(100_000);
    const lease = await h.jobs.leases.take('iy', { holder: 'worker', waitSeconds: 0 });
    await h.jobs.leases.complete(lease!.leaseId, [{ id: lease!.items[0]!.id, status: 'succeeded', output: 1 }]);
    await clock.advance(100_000);
    // 200 s since the job was made, 100 s since its result: served within the 120 s limit.
    expect((await h.jobs.upkeep.reconcile()).actions.expired).toBeUndefined();
    await clock.advance(30_000);
    expect((await h.jobs.upkeep.reconcile()).actions.expired).toBe(1);
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'completedWithFailures', totals: { succeeded: 1, failed: 1 } });
    // Nothing of the finished job is leased any more.
    expect(await h.jobs.leases.take('iy', { holder: 'worker', waitSeconds: 0 })).toBeUndefined();
  });

  it('refuses an idle limit out of bounds when a processor is declared', () => {
    expect(declareBody.safeParse({ type: 'external', idleLimitSeconds: 59 }).success).toBe(false);
    expect(declareBody.safeParse({ type: 'external', idleLimitSeconds: 30 * 86_400 + 1 }).success).toBe(false);
    expect(declareBody.safeParse({ type: 'external', idleLimitSeconds: 3600 }).success).toBe(true);
  });
});
