/**
 * A gated run's job action against a real jobs service on Azurite: performing the action again for
 * the same run (a repeated attempt) finds the job the first attempt submitted instead of submitting a
 * second one, and another run submits its own job.
 */
import { jobPort } from '../../../shared/app/ports';
import type { EffectPorts } from '../../../shared/effects/runner';
import { type ActionInput, performAction } from '../../../shared/gates/actionRunner';
import { gateActionSchema } from '../../../shared/gates/schemas';
import { transactions } from '../../support/billing';
import { jobHarness } from '../../support/jobs';

describe('gate job action on Azurite', () => {
  test('a retried action submits once per run id; the job holds the action items', async () => {
    const h = jobHarness({ serviceBus: false });
    const items = transactions(40, 7, 'gate-job');
    const action = gateActionSchema.parse({ type: 'job', processor: 'billing', items });
    const deps: EffectPorts = {
      queue: () => Promise.reject(new Error('a job action uses no queue')),
      serviceBusSender: () => undefined,
      webhook: { allowed: [], timeoutMs: 1000, maxResponseBytes: 0, maxRedirects: 0, allowPrivateAddresses: false },
      gates: undefined,
      // The app's port on the jobs service (shared/app/ports.ts).
      jobs: jobPort(h.jobs),
    };
    const input = (runId: string): ActionInput => ({ gate: 'launch', generation: 1, runId, action });

    const first = await performAction(deps, input('w1'));
    const retried = await performAction(deps, input('w1'));
    const other = await performAction(deps, input('w2'));

    expect(first).toEqual({ type: 'job', jobId: expect.any(String) });
    expect(retried).toEqual(first);
    expect(other).not.toEqual(first);
    const jobRows = (await h.rows('jobs')).filter((r) => r.partitionKey !== 'open');
    expect(jobRows.map((r) => r.partitionKey).sort()).toEqual([first, other].map((r) => (r.type === 'job' ? r.jobId : '')).sort());
    if (first.type !== 'job') throw new Error('not a job result');
    const job = await h.jobs.reads.job(first.jobId);
    expect(job).toMatchObject({ processor: 'billing', items: 40, envelopes: 2 });
    // Envelopes of both jobs, none twice: 40 items in envelopes of up to 32 per job.
    const queued = [...(await h.messages()).values()].flat();
    expect(queued).toHaveLength(4);
  });
});
