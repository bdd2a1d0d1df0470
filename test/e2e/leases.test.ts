/**
 * Lease requests whose callers have gone, over HTTP against the host of the run (the devhost, and
 * the real Functions host in the e2e-real run). A long poll's caller drops the answer unread and
 * closes its connection: to the server that is the same as a worker stopped, crashed or timed out
 * while its poll was open — neither host tells the handler that its client left (@azure/functions
 * 4.16.5 gives a handler no signal of it, and the real host ends no invocation when its client
 * leaves: docs/jobs.md). The batch such a poll takes is not an attempt, so three abandoned polls
 * followed by a job with `maxAttempts: 2` end with every item succeeded at attempt 1 (before #37:
 * the item leased twice unread came back at attempt 3 and failed `noResult`).
 *
 * And an asynchronous cancel on the same hosts: the DELETE answers 202 with the job `cancelling`
 * and its statusUri; a lease held from before is refused and nothing of the job is leased from
 * then on; the `jobsCancelItems` trigger writes the open items `cancelled` in the background.
 *
 * And a retry in a busy processor: back after its back-off plus one poll interval, ahead of the
 * processor's backlog (before the retry lane it came back only after all of it: docs/jobs.md).
 */
import { request } from 'node:http';

import { type E2eHost, startE2eHost } from './support/harness';
import { type JobView } from './support/jobs';
import { requestJson } from './support/http';
import { unique } from './support/names';

let host: E2eHost;

beforeAll(async () => {
  host = await startE2eHost({ env: { TALLYHO_JOBS_QUEUE_PREFIX: unique('le'), TALLYHO_JOBS_LEASE_POLL_MAX_MS: '250' } });
});

afterAll(async () => {
  await host?.dispose();
});

/** A lease request whose caller never reads the answer: its status, once it comes, and the connection closed. */
function abandonedPoll(processor: string, wait: number): Promise<number> {
  const body = JSON.stringify({ wait });
  const key = host.keys.function ?? host.keys.admin;
  return new Promise((resolve, reject) => {
    const req = request(
      host.url(`/api/processors/${processor}/leases`),
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(key ? { 'x-functions-key': key } : {}),
        },
      },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.destroy();
        req.destroy();
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? undefined : reject(err)));
    req.end(body);
  });
}

interface LeaseView {
  leaseId: string;
  items: { id: string; attempt: number }[];
}

describe('lease requests whose callers have gone', () => {
  it('three abandoned polls, then a job with maxAttempts 2: every item succeeds at attempt 1', async () => {
    const processor = unique('gone');
    const declared = await requestJson(host, 'PUT', `/api/processors/${processor}`, {
      key: 'admin',
      body: {
        type: 'external',
        batchSize: 1,
        leaseSeconds: 5,
        maxAttempts: 2,
        retry: { delaySeconds: 0, multiplier: 1, maxDelaySeconds: 0 },
      },
    });
    expect(declared.status).toBeLessThan(300);
    // Three polls wait; the job's two batches reach them, and the third takes one again once its lease runs out unused.
    const polls = [abandonedPoll(processor, 25), abandonedPoll(processor, 25), abandonedPoll(processor, 25)];
    const submitted = await requestJson<JobView>(host, 'POST', '/api/jobs', {
      body: { processor, items: [{ id: 'a' }, { id: 'b' }] },
    });
    expect(submitted.status).toBe(202);
    expect(await Promise.all(polls)).toEqual([200, 200, 200]);
    // A worker that reads its answers: both items, each at attempt 1, and they succeed.
    const seen: [string, number][] = [];
    while (seen.length < 2) {
      const lease = await requestJson<LeaseView>(host, 'POST', `/api/processors/${processor}/leases`, { body: { wait: 20 } });
      expect(lease.status).toBe(200);
      seen.push(...lease.body.items.map((i): [string, number] => [i.id, i.attempt]));
      const done = await requestJson(host, 'POST', `/api/leases/${lease.body.leaseId}/complete`, {
        body: { results: lease.body.items.map((i) => ({ id: i.id, status: 'succeeded', output: i.attempt })) },
      });
      expect(done.status).toBe(200);
    }
    expect(seen.sort()).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
    const view = await requestJson<JobView>(host, 'GET', `/api/jobs/${submitted.body.id}`);
    expect(view.body).toMatchObject({ state: 'completed', totals: { items: 2, succeeded: 2, failed: 0 } });
    const results = await requestJson<{ items: { id: string; status: string; attempts: number }[] }>(
      host,
      'GET',
      `/api/jobs/${submitted.body.id}/results`,
    );
    expect(results.body.items.map((r) => [r.id, r.status, r.attempts])).toEqual([
      ['a', 'succeeded', 1],
      ['b', 'succeeded', 1],
    ]);
  });

  it('a cancel answers 202 with the job cancelling, refuses its leases from then on, and ends it cancelled in the background', async () => {
    const processor = unique('cx');
    await requestJson(host, 'PUT', `/api/processors/${processor}`, {
      key: 'admin',
      body: { type: 'external', batchSize: 2, leaseSeconds: 60 },
    });
    const items = Array.from({ length: 6 }, (_, i) => ({ id: `c-${i}` }));
    const submitted = await requestJson<JobView>(host, 'POST', '/api/jobs', { body: { processor, items } });
    const held = await requestJson<LeaseView>(host, 'POST', `/api/processors/${processor}/leases`, { body: { wait: 20 } });
    expect(held.status).toBe(200);
    // Server-Timing says how long the app held the request and how it ended (the scale-out checker
    // counts the waits that ran out by it: a wait that lost its place says so, however late a busy
    // host or a stalled machine delivers it).
    expect(held.headers.get('server-timing')).toMatch(/^lease;dur=\d+;desc="granted"$/);
    const cancel = await requestJson<JobView & { statusUri: string }>(host, 'DELETE', `/api/jobs/${submitted.body.id}`);
    expect(cancel.status).toBe(202);
    expect(cancel.body.statusUri).toBe(`/api/jobs/${submitted.body.id}`);
    expect(cancel.headers.get('location')).toBe(cancel.body.statusUri);
    expect(['cancelling', 'cancelled']).toContain(cancel.body.state);
    // From the answer on: the held lease is refused, and no batch of the job is leased.
    const extend = await requestJson<{ reason?: string }>(host, 'POST', `/api/leases/${held.body.leaseId}/extend`);
    expect(extend.status).toBe(409);
    expect(extend.body.reason).toBe('jobCancelled');
    expect((await requestJson(host, 'POST', `/api/processors/${processor}/leases`, { body: { wait: 0 } })).status).toBe(204);
    const waited = await requestJson(host, 'POST', `/api/processors/${processor}/leases`, { body: { wait: 1 } });
    expect(waited.status).toBe(204);
    // Held for its whole wait: the deadline is on the app's clock (whole milliseconds), the duration on
    // the high-resolution one, rounded, so a wait of 1,000 ms may read 999 (CI, 2026-11-29).
    expect(Number(/^lease;dur=(\d+);desc="timeout"$/.exec(waited.headers.get('server-timing') ?? '')?.[1])).toBeGreaterThanOrEqual(999);
    for (;;) {
      const view = await requestJson<JobView & { totals: { cancelled: number } }>(host, 'GET', cancel.body.statusUri);
      if (view.body.state === 'cancelled') {
        expect(view.body.totals).toMatchObject({ items: 6, succeeded: 0, cancelled: 6, pending: 0 });
        break;
      }
      expect(view.body.state).toBe('cancelling');
      await new Promise((r) => setTimeout(r, 200));
    }
  });
});

describe('a retry in a busy processor', () => {
  it('is leased again once its back-off and one poll interval are over, ahead of a backlog of 30 envelopes', async () => {
    const processor = unique('busy');
    const declared = await requestJson(host, 'PUT', `/api/processors/${processor}`, {
      key: 'admin',
      body: {
        type: 'external',
        batchSize: 1,
        leaseSeconds: 30,
        maxAttempts: 3,
        retry: { delaySeconds: 1, multiplier: 1, maxDelaySeconds: 1 },
      },
    });
    expect(declared.status).toBeLessThan(300);
    const items = Array.from({ length: 30 }, (_, i) => ({ id: `b-${String(i).padStart(2, '0')}` }));
    const submitted = await requestJson<JobView>(host, 'POST', '/api/jobs', { body: { processor, items } });
    expect(submitted.status).toBe(202);
    const lease = (wait: number) => requestJson<LeaseView>(host, 'POST', `/api/processors/${processor}/leases`, { body: { wait } });
    const complete = (leased: LeaseView, status: 'succeeded' | 'retry') =>
      requestJson(host, 'POST', `/api/leases/${leased.leaseId}/complete`, {
        body: { results: leased.items.map((i) => (status === 'retry' ? { id: i.id, status, reason: 'busy' } : { id: i.id, status })) },
      });
    const first = await lease(20);
    expect(first.body.items.map((i) => [i.id, i.attempt])).toEqual([['b-00', 1]]);
    expect((await complete(first.body, 'retry')).status).toBe(200);
    // The back-off (1 s) and the poll interval (TALLYHO_JOBS_LEASE_POLL_MAX_MS, 250 ms above): the bound docs/jobs.md states.
    await new Promise((r) => setTimeout(r, 1250));
    const again = await lease(0);
    expect(again.body.items.map((i) => [i.id, i.attempt])).toEqual([['b-00', 2]]);
    expect((await complete(again.body, 'succeeded')).status).toBe(200);
    // The 29 envelopes of the backlog were all still there behind it.
    let rest = 0;
    for (;;) {
      const next = await lease(0);
      if (next.status === 204) break;
      rest += next.body.items.length;
      expect((await complete(next.body, 'succeeded')).status).toBe(200);
    }
    expect(rest).toBe(29);
    const view = await requestJson<JobView>(host, 'GET', `/api/jobs/${submitted.body.id}`);
    expect(view.body).toMatchObject({ state: 'completed', totals: { items: 30, succeeded: 30, failed: 0 } });
  });
});
