/**
 * Security finding 5 over HTTP on the devhost: a function-level caller cannot make the app hold a
 * writer entity and a flusher orchestration for every event type it invents. The host runs in its
 * own task hub, where the type count starts at zero.
 */
import { flusherInstanceId } from '../../shared/streams/names';
import { transactions } from '../support/billing';
import { ownHostTest, type E2eHost, startE2eHost } from './support/harness';
import { expectProblem, requestJson } from './support/http';
import { settledJob, queuesPolledPromptly } from './support/jobs';
import { unique } from './support/names';
import { post, view } from './support/streams';

describe('caps on what function-level callers create, over HTTP', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost({ env: { TALLYHO_STREAMS_MAX_TYPES: '2' } });
  });
  afterAll(async () => {
    await host.dispose();
  });

  ownHostTest('a new stream type beyond TALLYHO_STREAMS_MAX_TYPES is refused and creates nothing', async () => {
    const [first, second, third] = [unique('cap-a'), unique('cap-b'), unique('cap-c')];
    expect((await post(host, first, { producer: 'p', seq: 1 })).status).toBe(202);
    expect((await post(host, second, { producer: 'p', seq: 1 })).status).toBe(202);

    const refused = await post(host, third, { producer: 'p', seq: 1 });
    const problem = expectProblem(refused, 409, 'Conflict');
    expect(problem).toMatchObject({ limit: 'TALLYHO_STREAMS_MAX_TYPES', max: 2 });

    // No writer entity and no flusher orchestration exist for the refused type.
    const { writer } = await view(host, third);
    expect(writer).toMatchObject({ exists: false, accepted: 0 });
    const flusher = await requestJson(host, 'GET', `/runtime/webhooks/durabletask/instances/${flusherInstanceId(writer.key)}`, {
      key: 'admin',
    });
    expect(flusher.status).toBe(404);

    // Known types keep working (served from the process's memory of admitted types).
    expect((await post(host, first, { producer: 'p', seq: 2 })).status).toBe(202);
    expect((await view(host, first)).writer.accepted).toBe(2);
    // A retry of the refused type is refused again: nothing freed a place.
    expectProblem(await post(host, third, { producer: 'p', seq: 1 }), 409, 'Conflict');
  });
});

describe("the billing ledger is the app's own stream", () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost({
      env: {
        TALLYHO_STREAMS_MAX_TYPES: '1',
        TALLYHO_STREAMS_FLUSH_INTERVAL_MS: '200',
        ...queuesPolledPromptly,
        TALLYHO_JOBS_QUEUE_PREFIX: unique('own'),
      },
    });
  });
  afterAll(async () => {
    await host.dispose();
  });

  ownHostTest('callers cannot append to it (403), and a full type cap does not stop billing delivery', async () => {
    // A caller takes the only place under TALLYHO_STREAMS_MAX_TYPES.
    expect((await post(host, unique('own-a'), { producer: 'p', seq: 1 })).status).toBe(202);
    expectProblem(await post(host, unique('own-b'), { producer: 'p', seq: 1 }), 409, 'Conflict');

    // A forged invoice line (and a producer seq that would make the real lines look like duplicates) is refused.
    const forged = await post(host, 'billing-invoices', { producer: 'job-x-r0', seq: 999, data: { customerId: 'c-1', grossMinor: '1' } });
    expectProblem(forged, 403, 'Forbidden');

    // The app still delivers a billing job's invoice lines to it.
    const accepted = await requestJson<{ id: string }>(host, 'POST', '/api/jobs', {
      body: { processor: 'billing', items: transactions(5, 7, unique('own')) },
    });
    expect(accepted.status).toBe(202);
    const job = await settledJob(host, accepted.body.id);
    expect(job).toMatchObject({ state: 'completed', delivery: 'delivered' });
    expect((await view(host, 'billing-invoices')).writer.accepted).toBeGreaterThan(0);
  });
});
