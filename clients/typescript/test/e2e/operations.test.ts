/**
 * Long-running operations through the client, against the host of the run: a poller honours the
 * server's Retry-After, waits until done, stops waiting (and only waiting) on abort, and resumes
 * from its toString() in another client without starting the operation again.
 */
import { TallyhoClient } from '../../src/client';
import { isSettled } from '../../src/jobs';
import { type E2eHost, hostLabel, startE2eHost } from '../../../../test/e2e/support/harness';
import { unique } from '../../../../test/e2e/support/names';
import { queuesPolledPromptly } from '../../../../test/e2e/support/jobs';

describe(`long-running operations with @tallyho/client against the ${hostLabel()}`, () => {
  let host: E2eHost;

  const client = () =>
    new TallyhoClient({
      baseUrl: host.url('/api'),
      ...(host.keys.function === undefined ? {} : { functionKey: host.keys.function }),
      ...(host.keys.admin === undefined ? {} : { adminKey: host.keys.admin }),
    });

  beforeAll(async () => {
    host = await startE2eHost({
      env: { TALLYHO_JOBS_QUEUE_PREFIX: unique('lro'), ...queuesPolledPromptly },
    });
  });
  afterAll(async () => {
    await host?.dispose();
  });

  test('beginSubmit waits for the settled job at the Retry-After interval; a resumed poller follows the same job', async () => {
    const jobs = client().jobs;
    const poller = await jobs.beginSubmit('wordcount', [
      { id: 'a', text: 'one two three' },
      { id: 'b', text: 'four' },
    ]);
    const started = poller.getOperationState();
    expect(started).toMatchObject({ kind: 'jobSubmit', intervalMs: 2000, isDone: false, latest: { state: 'accepted' } });
    expect(started.statusUri).toBe(`/api/jobs/${started.latest?.id}`);
    expect(poller.getResult()).toBeUndefined();

    const saved = poller.toString();
    const job = await poller.pollUntilDone();
    expect(job).toMatchObject({ id: started.latest?.id, state: 'completed', totals: { items: 2, succeeded: 2 } });
    expect(poller.isDone()).toBe(true);
    expect(poller.getResult()).toEqual(job);

    // Another client, from the text alone: nothing is submitted again, the same job is followed.
    const resumed = await client().jobs.beginSubmit('wordcount', [], { resumeFrom: saved });
    expect(resumed.isDone()).toBe(false);
    await expect(resumed.pollUntilDone()).resolves.toMatchObject({ id: job.id, state: 'completed' });
    await expect(client().jobs.beginSubmit('wordcount', [], { resumeFrom: 'not a poller' })).rejects.toThrow(TypeError);
  });

  test('beginStartRun: an aborted wait leaves the run waiting; resumed after the release it is done', async () => {
    const c = client();
    const gate = c.gate(unique('lro'));
    const created = await gate.create({ by: 'e2e' });
    expect(created.state).toBe('closed');
    const poller = await gate.beginStartRun({ runId: 'w1', intervalMs: 200 });
    expect(poller.getOperationState()).toMatchObject({ kind: 'gateRun', statusUri: expect.stringMatching(/\/runs\/w1$/) });

    const abort = new AbortController();
    setTimeout(() => abort.abort(), 700);
    await expect(poller.pollUntilDone({ abortSignal: abort.signal })).rejects.toMatchObject({ name: 'AbortError' });
    // The wait ended, the run did not (the abort may have come before the first read answered).
    expect(poller.isDone()).toBe(false);
    await expect(poller.poll()).resolves.toMatchObject({ runId: 'w1', state: 'waiting' });
    expect(poller.getOperationState().latest).toMatchObject({ runId: 'w1', state: 'waiting' });
    await expect(gate.getRun('w1')).resolves.toMatchObject({ state: 'waiting' });

    const saved = poller.toString();
    const released = await gate.release({ by: 'e2e' });
    expect(released.outcome).toBe('released');
    const resumed = await c.gate('any').beginStartRun({ resumeFrom: saved });
    await expect(resumed.pollUntilDone()).resolves.toMatchObject({ runId: 'w1', state: 'proceeded', action: { type: 'none' } });
    // A job poller's text is refused by a run poller.
    const jobPoller = await c.jobs.beginSubmit('wordcount', [{ id: 'x', text: 'y' }]);
    await expect(gate.beginStartRun({ resumeFrom: jobPoller.toString() })).rejects.toThrow(/gateRun/);
    expect(isSettled(await jobPoller.pollUntilDone())).toBe(true);
  });
});
