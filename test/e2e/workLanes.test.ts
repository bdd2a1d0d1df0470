/**
 * The work queues' retry lanes on the host of the run (the devhost, and the real host 4.1037 with
 * Node worker 3.9.1 in the e2e-real project). Each lane `<prefix>-r-<n>` is read by a trigger of its
 * own (`jobsRetry<n>`): the queue extension (Microsoft.Azure.WebJobs.Extensions.Storage 5.3.10 on the
 * real host, devhost/triggers/queueTrigger.ts on the devhost) runs a listener per function, each polling its own queue,
 * so an envelope in a lane is processed while its work queue's backlog waits — here the work
 * triggers are disabled (`AzureWebJobs.jobsWork<n>.Disabled`), so the backlog waits for certain. And
 * one that fails every delivery in a lane reaches the lane's poison queue, whose trigger
 * (`jobsRetryPoison<n>`) records its items failed with the reason. Retried items of the in-app
 * processors travel this way (test/integration/jobs/workLane.test.ts shows them go to the lane);
 * neither in-app processor of the app retries, so here real envelopes are copied into a lane.
 */
import { containers } from '../../shared/resources';
import type { StorageClients } from '../../shared/storage/clients';
import { transactions } from '../support/billing';
import { storageFor } from '../support/sequences';
import { until } from '../support/waits';
import { describeOwnHost, type E2eHost, startE2eHost, storageOf } from './support/harness';
import { requestJson } from './support/http';
import { type JobView, queuesPolledPromptly } from './support/jobs';
import { unique } from './support/names';
import { readAll } from './support/pages';

interface ResultView {
  id: string;
  status: string;
  code?: string;
  reason?: string;
}

interface Captured {
  queue: string;
  text: string;
  /** A sealed envelope: `{"s": MAC, "m": envelope}` (shared/jobs/envelopes/seal.ts, the wire form in wire.ts). */
  decoded: { j: string; i: { id: string; c?: unknown }[] };
}

const queueCount = 2;

describeOwnHost('the work queues’ retry lanes, read by triggers of their own', () => {
  const prefix = unique('jl');
  const workQueues = Array.from({ length: queueCount }, (_, i) => `${prefix}-${i}`);
  const lane = `${prefix}-r-0`;
  let host: E2eHost;
  let storage: StorageClients;

  beforeAll(async () => {
    host = await startE2eHost({
      env: {
        ...queuesPolledPromptly,
        ...Object.fromEntries(workQueues.map((_, i) => [`AzureWebJobs.jobsWork${i}.Disabled`, 'true'])),
        AzureFunctionsJobHost__extensions__queues__visibilityTimeout: '00:00:00',
        AzureFunctionsJobHost__extensions__queues__maxDequeueCount: '3',
        TALLYHO_JOBS_QUEUES: String(queueCount),
        TALLYHO_JOBS_QUEUE_PREFIX: prefix,
        TALLYHO_JOBS_ENVELOPE_MAX_ITEMS: '8',
      },
    });
    storage = storageFor(storageOf(host));
  });
  afterAll(async () => {
    await host?.dispose();
  });

  const submit = async (items: unknown[]): Promise<JobView> => {
    const res = await requestJson<JobView>(host, 'POST', '/api/jobs', { body: { processor: 'billing', items } });
    expect(res.status).toBe(202);
    return res.body;
  };
  const view = async (id: string): Promise<JobView> => (await requestJson<JobView>(host, 'GET', `/api/jobs/${id}`)).body;

  async function captured(): Promise<Captured[]> {
    const out: Captured[] = [];
    for (const queue of workQueues) {
      const peeked = await (await storage.queue(queue)).peekMessages({ numberOfMessages: 32 });
      for (const m of peeked.peekedMessageItems) {
        const decoded = (JSON.parse(Buffer.from(m.messageText, 'base64').toString('utf8')) as { m: Captured['decoded'] }).m;
        out.push({ queue, text: m.messageText, decoded });
      }
    }
    return out;
  }

  async function backlog(): Promise<number> {
    let total = 0;
    for (const queue of workQueues) total += (await (await storage.queue(queue)).getProperties()).approximateMessagesCount ?? 0;
    return total;
  }

  it('processes an envelope in a lane while its work queue’s backlog waits; one that always fails reaches the lane’s poison queue and its items fail with the reason', async () => {
    // 24 items (3 envelopes) and 16 (2 envelopes), one of them big enough for a claim check.
    const plain = await submit(transactions(24, 23, 'ln'));
    const crashingItems = transactions(16, 29, 'lc');
    crashingItems[3] = { ...crashingItems[3]!, id: 'lc-big', metadata: { blob: 'b'.repeat(40_000) } };
    const crashing = await submit(crashingItems);
    const messages = await until('the 5 envelopes to be queued', async () => {
      const all = await captured();
      return all.length === 5 ? all : undefined;
    });
    const first = messages.find((m) => m.decoded.j === plain.id)!;
    const claimChecked = messages.find((m) => m.decoded.j === crashing.id && m.decoded.i.some((e) => e.c !== undefined))!;
    expect(claimChecked.decoded.i.map((e) => e.id)).toContain('lc-big');
    // Its input goes missing: the claim check cannot be redeemed, every delivery crashes.
    const container = await storage.container(containers.jobs);
    for await (const blob of container.listBlobsFlat({ prefix: `${crashing.id}/input` })) await container.deleteBlob(blob.name);

    // Copies of both into lane 0: its trigger runs them, though the work triggers are off.
    const laneQueue = await storage.queue(lane);
    await laneQueue.sendMessage(first.text);
    await laneQueue.sendMessage(claimChecked.text);

    const done = await until(`the lane's envelope of job ${plain.id} to be processed`, async () => {
      const v = await view(plain.id);
      return v.totals.succeeded === first.decoded.i.length ? v : undefined;
    });
    expect(done.totals).toEqual({
      items: 24,
      succeeded: first.decoded.i.length,
      failed: 0,
      cancelled: 0,
      pending: 24 - first.decoded.i.length,
    });
    const failed = await until(`the lane's crashing envelope of job ${crashing.id} to reach ${lane}-poison`, async () => {
      const v = await view(crashing.id);
      return v.totals.failed === claimChecked.decoded.i.length ? v : undefined;
    });
    expect(failed.totals).toMatchObject({ succeeded: 0, failed: claimChecked.decoded.i.length });
    const failures = await readAll<ResultView>(host, `/api/jobs/${crashing.id}/results?status=failed`);
    expect(failures.map((f) => f.id).sort()).toEqual(claimChecked.decoded.i.map((e) => e.id).sort());
    for (const f of failures) {
      expect(f).toMatchObject({
        code: 'poisoned',
        reason: expect.stringMatching(
          new RegExp(`failed 3 deliveries and reached ${lane}-poison; last error: Claim check cannot be redeemed`),
        ),
      });
    }
    // The work queues' backlog was never touched.
    expect(await backlog()).toBe(5);
  });
});
