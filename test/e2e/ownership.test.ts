/**
 * Ownership and worker roles by behaviour (issue #36), in the keys mode with Tallyho credentials (each
 * request still carries the function key, or the master key for the admin): a job id is no
 * capability, a worker of Q gets nothing of P, and the job ids a worker, a schedule run or a gated
 * run shows open nothing for anyone but the job's owner. Sending the key as `?CODE=` or in a second
 * header names the same `key:shared` caller: test/e2e/securityProbe.test.ts ("one caller cannot lock
 * new producers out of a stream").
 */
import { randomBytes } from 'node:crypto';

import { describeOwnHost, type E2eHost, hostLabel, startE2eHost } from './support/harness';
import { type Identities, keyIdentities, newTag, type Processors, requestsAs, type Who } from './support/identities';
import { heldLeaseSeconds } from './support/jobs';
import { unique } from './support/names';
import { until } from './support/wait';

describeOwnHost(`ownership and worker roles (${hostLabel()}, keys on, credentials)`, () => {
  let host: E2eHost;
  let ids: Identities;
  const processors: Processors = { p: unique('own-p'), q: unique('own-q') };

  const { send, made } = requestsAs(
    () => host,
    () => ids,
  );

  const submit = async (who: Who, items = [{ id: 'i-1' }, { id: 'i-2' }]): Promise<string> =>
    String((await made(who, 'POST', '/api/jobs', { processor: processors.p, items })).id);

  /** A lease of P's batch holding an item of `job`, taken by worker P (others of P's batches are put back by not completing). */
  const leaseOf = (job: string) =>
    until(
      `a lease of ${job}`,
      async () => {
        const res = await send('workerP', 'POST', `/api/processors/${processors.p}/leases`, { wait: 1 });
        const items = (res.body.items ?? []) as { id: string; jobId: string }[];
        return res.status === 200 && items.some((i) => i.jobId === job) ? { leaseId: String(res.body.leaseId), items } : undefined;
      },
      30_000,
    );

  beforeAll(async () => {
    const key = randomBytes(32);
    host = await startE2eHost({ env: { TALLYHO_CREDENTIALS_KEY: key.toString('base64') } });
    const issued = await keyIdentities(host, key, processors, newTag());
    ids = issued.identities;
    await made('admin', 'PUT', `/api/processors/${processors.p}`, {
      type: 'external',
      leaseSeconds: heldLeaseSeconds,
      workers: [issued.workerPId],
    });
    await made('admin', 'PUT', `/api/processors/${processors.q}`, { type: 'external' });
  }, 120_000);
  afterAll(async () => {
    await host.dispose();
  });

  test("a stranger who knows a job's id cannot read it, its results, failures or files, nor cancel it: 404 as for no job", async () => {
    const job = await submit('submitterA');
    const none = `k-${'0'.repeat(32)}`;
    for (const [method, path] of [
      ['GET', ''],
      ['GET', '/results'],
      ['GET', '/failures'],
      ['GET', '/files/wordcount.csv'],
      ['DELETE', ''],
    ] as const) {
      const stranger = await send('submitterB', method, `/api/jobs/${job}${path}`);
      const nothing = await send('submitterB', method, `/api/jobs/${none}${path}`);
      expect({ path, status: stranger.status, detail: String(stranger.body.detail).replace(job, '<id>') }).toEqual({
        path,
        status: 404,
        detail: String(nothing.body.detail).replace(none, '<id>'),
      });
    }
    const own = await send('submitterA', 'GET', `/api/jobs/${job}`);
    expect({ status: own.status, state: own.body.state }).toEqual({ status: 200, state: expect.not.stringMatching(/cancelled/) });
    // An admin reads and cancels anyone's.
    expect((await send('admin', 'DELETE', `/api/jobs/${job}`)).status).toBe(202); // the cancel is asynchronous: 202, the job `cancelling`
  });

  test("a worker of Q cannot lease, extend or complete P's batches; P's worker's completion is what the owner reads", async () => {
    const job = await submit('submitterA', [{ id: 'x-1' }]);
    const refused = await send('workerQ', 'POST', `/api/processors/${processors.p}/leases`, { wait: 0 });
    expect({ status: refused.status, detail: refused.body.detail }).toEqual({ status: 403, detail: expect.stringContaining(processors.p) });
    const lease = await leaseOf(job);
    const results = lease.items.map((i) => ({ id: i.id, status: 'succeeded', output: { by: i.jobId === job ? 'p' : 'p-other' } }));
    expect((await send('workerQ', 'POST', `/api/leases/${lease.leaseId}/extend`)).status).toBe(403);
    const forged = await send('workerQ', 'POST', `/api/leases/${lease.leaseId}/complete`, {
      results: results.map((r) => ({ ...r, output: { by: 'q' } })),
    });
    expect(forged.status).toBe(403);
    // A submitter is no worker either.
    expect((await send('submitterB', 'POST', `/api/leases/${lease.leaseId}/complete`, { results })).status).toBe(403);
    expect((await send('workerP', 'POST', `/api/leases/${lease.leaseId}/complete`, { results })).status).toBe(200);
    const read = await send('submitterA', 'GET', `/api/jobs/${job}/results`);
    expect(read.body.items).toEqual([expect.objectContaining({ id: 'x-1', status: 'succeeded', output: { by: 'p' } })]);
  });

  test('the job id a lease shows its worker opens nothing for the worker: not the job, not its cancel', async () => {
    const job = await submit('submitterA', [{ id: 'w-1' }]);
    const lease = await leaseOf(job);
    expect(lease.items.map((i) => i.jobId)).toContain(job);
    expect(JSON.stringify(lease)).not.toContain('cred:');
    // The worker holds no submitter role: 403; a submitter who is not the owner: 404.
    expect((await send('workerP', 'GET', `/api/jobs/${job}`)).status).toBe(403);
    expect((await send('workerP', 'DELETE', `/api/jobs/${job}`)).status).toBe(403);
    expect((await send('submitterB', 'DELETE', `/api/jobs/${job}`)).status).toBe(404);
    expect((await send('submitterA', 'GET', `/api/jobs/${job}`)).body.state).not.toBe('cancelled');
  });

  test("the same Idempotency-Key from two callers names two jobs, and neither replays the other's", async () => {
    const key = { 'idempotency-key': unique('shared-key') };
    const a = await made('submitterA', 'POST', '/api/jobs', { processor: processors.p, items: [{ id: 'k-1' }] }, key);
    const b = await made('submitterB', 'POST', '/api/jobs', { processor: processors.p, items: [{ id: 'k-1' }] }, key);
    expect(b.id).not.toBe(a.id);
    const again = await fetch(host.url('/api/jobs'), {
      method: 'POST',
      headers: { ...ids.submitterA, ...key, 'content-type': 'application/json' },
      body: JSON.stringify({ processor: processors.p, items: [{ id: 'k-1' }] }),
    });
    expect({
      status: again.status,
      replayed: again.headers.get('idempotent-replayed'),
      id: ((await again.json()) as { id: string }).id,
    }).toEqual({
      status: 202,
      replayed: 'true',
      id: a.id,
    });
  });

  test("a gated run's action.jobId names a job its starter owns; no one else opens the run or the job, nor takes its run id", async () => {
    const gate = unique('own-gate');
    await made('admin', 'PUT', `/api/gates/${gate}`, {});
    const runId = unique('own-run');
    const action = { type: 'job', processor: processors.p, items: [{ id: 'g-1' }] };
    await made('submitterB', 'POST', `/api/gates/${gate}/runs`, { runId, action });
    // The same run id from A: a 409, never B's run.
    expect((await send('submitterA', 'POST', `/api/gates/${gate}/runs`, { runId, action })).status).toBe(409);
    expect((await send('submitterA', 'GET', `/api/gates/${gate}/runs/${runId}`)).status).toBe(404);
    await made('admin', 'POST', `/api/gates/${gate}/release`, {});
    const run = await until(
      "the run's job",
      async () => {
        const res = await send('submitterB', 'GET', `/api/gates/${gate}/runs/${runId}`);
        const jobId = (res.body.action as { jobId?: string } | null)?.jobId;
        return jobId === undefined ? undefined : jobId;
      },
      60_000,
    );
    expect((await send('submitterA', 'GET', `/api/jobs/${run}`)).status).toBe(404);
    expect((await send('submitterA', 'DELETE', `/api/jobs/${run}`)).status).toBe(404);
    expect((await send('submitterB', 'GET', `/api/jobs/${run}`)).status).toBe(200);
  }, 90_000);

  test('a schedule run\'s "started k-…" names a job of the schedule\'s owner; a stranger opens neither', async () => {
    const schedule = await made('submitterA', 'POST', '/api/schedules', {
      at: '2099-01-01T00:00:00Z',
      target: { type: 'job', processor: processors.p, items: [{ id: 's-1' }] },
    });
    const id = String(schedule.id);
    expect((await send('submitterB', 'GET', `/api/schedules/${id}`)).status).toBe(404);
    expect((await send('admin', 'POST', `/api/schedules/${id}/trigger`)).status).toBe(202);
    const job = await until(
      'the run that started a job',
      async () => {
        const res = await send('submitterA', 'GET', `/api/schedules/${id}`);
        const detail = ((res.body.runs ?? []) as { detail?: string }[]).map((r) => r.detail ?? '').find((d) => d.startsWith('started '));
        return detail?.slice('started '.length);
      },
      60_000,
    );
    expect((await send('submitterB', 'GET', `/api/jobs/${job}`)).status).toBe(404);
    expect((await send('submitterA', 'GET', `/api/jobs/${job}`)).status).toBe(200);
  }, 90_000);
});
