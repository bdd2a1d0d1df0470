/**
 * The reconciler pages through every open job across passes, on Azurite. It visits one page of the
 * `open` index per pass (TALLYHO_JOBS_RECONCILE_PAGE, 3 here instead of the default 1,000) and goes
 * on after the last job it visited, a cursor kept in the jobs table. Before, every pass read the
 * first page again: with a page's worth of jobs that stay open at the front, the debris behind them
 * (an index entry whose submitter died before writing the job row) was never reached.
 */
import { declareBody } from '../../../shared/jobs/http/processorSchemas';
import { jobHarness } from '../../support/jobs';

const page = 3;

describe('the job reconciler on more open jobs than one page, on Azurite', () => {
  it('visits every open job within ceil(open / page) passes, from any instance, and starts again after a short page', async () => {
    const h = jobHarness({ settings: { reconcilePage: page } });
    await h.jobs.processors.declare('idle', declareBody.parse({ type: 'external' }));
    // A page of jobs that stay open (no worker leases them), first in id order…
    const running: string[] = [];
    for (let i = 0; i < page; i++)
      running.push((await h.jobs.submissions.submit({ processor: 'idle', items: [{ id: 'x' }] }, undefined)).job.id);
    running.sort();
    // …and four entries of submitters that died before writing their job, stale, after them.
    const stale = Date.now() - 3600_000;
    const debris = ['29991231235959-00000000a1', '29991231235959-00000000a2', '29991231235959-00000000a3', '29991231235959-00000000a4'];
    for (const id of debris) await h.stores.jobs.markOpen(id, stale);
    expect((await h.stores.jobs.listOpen(100)).map((o) => o.id)).toEqual([...running, ...debris]);

    expect(await h.jobs.upkeep.reconcile()).toMatchObject({ visited: 3, actions: { none: 3 } });
    expect(await h.jobs.upkeep.reconcile()).toMatchObject({ visited: 3, actions: { closed: 3 } });
    // A second instance (another harness on the same tables) goes on where the first stopped.
    const other = jobHarness({ names: h.names, settings: { reconcilePage: page } });
    expect(await other.jobs.upkeep.reconcile()).toMatchObject({ visited: 1, actions: { closed: 1 } });
    // The short page was the end: the next pass starts again from the first job.
    expect(await h.jobs.upkeep.reconcile()).toMatchObject({ visited: 3, actions: { none: 3 } });
    expect((await h.stores.jobs.listOpen(100)).map((o) => o.id)).toEqual(running);
  });
});
