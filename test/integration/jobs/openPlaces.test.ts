/**
 * Every unfinished job holds a place among TALLYHO_JOBS_MAX_OPEN, on Azurite — the two ways a job
 * ran without one:
 * - a submission slower than TALLYHO_JOBS_STALE_SECONDS between its place and its job row (its input
 *   file's write held at a fault proxy): the reconciler, on another instance, took it for a dead
 *   submitter's debris and gave the place back, and the job was created afterwards with no place and
 *   no `open` entry (the scale-out soak on the real host saw 7 jobs open with a cap of 6). Now the
 *   reconciler's tombstone makes the submission open the job again;
 * - a retry-failed round, which made a finished job unfinished again without taking a place.
 */
import { ManualClock } from '../../../shared/clock';
import { declareBody } from '../../../shared/jobs/http/processorSchemas';
import type { JobProcessor } from '../../../shared/jobs/processors/processor';
import { codeOf } from '../../support/appErrors';
import { startFaultProxy } from '../../support/faultProxy';
import { jobHarness, jobNames } from '../../support/jobs';
import { runStorage } from '../../support/storageAccounts';

describe('places among TALLYHO_JOBS_MAX_OPEN, on Azurite', () => {
  it('a submission the reconciler took for a dead one (slower than the stale time) still ends with its job holding a place and an open entry', async () => {
    const proxy = await startFaultProxy(runStorage());
    try {
      const names = jobNames();
      const settings = { maxOpen: 1, maxOpenPerOwner: 1, staleSeconds: 30 };
      const slow = jobHarness({ names, settings, connection: proxy.connectionString });
      // The reconciling instance's clock is an hour on: the slow submission's `open` entry is stale to it.
      const other = jobHarness({ names, settings, clock: new ManualClock(Date.now() + 3600_000) });
      await other.jobs.processors.declare('sx', declareBody.parse({ type: 'external' }));
      let release = (): void => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      let reached = (): void => undefined;
      const atInput = new Promise<void>((resolve) => (reached = resolve));
      // The input file's write (after the place, before the job row) waits until the reconciler has run.
      proxy.setRules((r) => {
        if (r.service !== 'blob' || r.method !== 'PUT') return undefined;
        reached();
        return { kind: 'hold', until: held };
      });
      const submitting = slow.jobs.submissions.submit({ processor: 'sx', items: [{ id: 'a' }] }, undefined, { owner: 'a' });
      await atInput;
      expect(await other.jobs.upkeep.reconcile()).toMatchObject({ visited: 1, actions: { closed: 1 } });
      expect(await other.jobs.openJobsOf('a')).toBe(0);
      release();
      const { job } = await submitting;

      // The job holds its place again: the cap of 1 refuses the next one, and its entry is in the open index.
      expect(await other.jobs.openJobsOf('a')).toBe(1);
      expect(await codeOf(other.jobs.submissions.submit({ processor: 'sx', items: [{ id: 'b' }] }, undefined, { owner: 'b' }))).toBe(
        'TooManyRequests',
      );
      expect((await other.stores.jobs.listOpen(10)).map((o) => o.id)).toEqual([job.id]);
      expect(await other.jobs.reads.view(job.id)).toMatchObject({ state: 'accepted', totals: { items: 1, pending: 1 } });
      // Lists show the job once, and no tombstone.
      expect((await other.stores.jobs.list({ maxPageSize: 10 })).items.map((j) => j.id)).toEqual([job.id]);
    } finally {
      await proxy.close();
    }
  });

  it('a retry-failed round takes a place again: refused while the cap is full, and it holds one while it runs', async () => {
    let failing = true;
    const flaky: JobProcessor = {
      name: 'flaky',
      processItem: () =>
        Promise.resolve(failing ? { ok: false, code: 'down', reason: 'offline', retryable: false } : { ok: true, output: 1 }),
      finalize: () => Promise.resolve({}),
    };
    const settings = { maxOpen: 1, maxOpenPerOwner: 1 };
    const h = jobHarness({ processors: [flaky], settings });
    const { job } = await h.jobs.submissions.submit({ processor: 'flaky', items: [{ id: 'x' }] }, undefined, { owner: 'a' });
    await h.drain();
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'completedWithFailures' });
    expect(await h.jobs.openJobsOf('a')).toBe(0);

    // Another job holds the one place: the round is refused, and the job stays as it was.
    await h.jobs.processors.declare('idle', declareBody.parse({ type: 'external' }));
    const other = (await h.jobs.submissions.submit({ processor: 'idle', items: [{ id: 'y' }] }, undefined, { owner: 'b' })).job;
    expect(await codeOf(h.jobs.submissions.retryFailed(job.id))).toBe('TooManyRequests');
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'completedWithFailures', round: 0 });

    // Once the place is free the round starts, holds it while it runs, and gives it back when it ends.
    await h.jobs.cancels.request(other.id);
    expect(await h.runCancels()).toBe(1);
    expect(await h.jobs.openJobsOf('b')).toBe(0);
    failing = false;
    expect(await h.jobs.submissions.retryFailed(job.id)).toMatchObject({ round: 1 });
    expect(await h.jobs.openJobsOf('a')).toBe(1);
    await h.drain();
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'completed', round: 1 });
    expect(await h.jobs.openJobsOf('a')).toBe(0);
  });
});
