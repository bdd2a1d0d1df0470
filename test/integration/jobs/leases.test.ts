/**
 * External processors on Azurite: items submitted to a declared processor travel on its own queue,
 * workers lease them (the lease is the message's visibility, its pop receipt the proof), extend,
 * and complete with a result per item; retries and items left out come back as their next attempt;
 * a completion after the lease ran out is a 409 that changes nothing, a second one answers the first's report; a lease
 * completes only its own items; a cancelled job's leases are refused.
 */
import { isAppError } from '../../../shared/errors';
import { ManualClock } from '../../../shared/clock';
import { declareBody } from '../../../shared/jobs/http/processorSchemas';
import { jobsRoutes } from '../../../shared/jobs/http/routes';
import { jobHarness } from '../../support/jobs';
import { callRoute } from '../../support/routeRequest';

const declare = (overrides: Record<string, unknown> = {}) =>
  declareBody.parse({ type: 'external', batchSize: 10, leaseSeconds: 30, ...overrides });

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string; issues: unknown[] }> {
  try {
    await promise;
  } catch (err) {
    if (isAppError(err)) return { code: err.code, message: err.message, issues: [...err.issues] };
    throw err;
  }
  throw new Error('expected a refusal');
}

const items = (n: number, prefix = 'img') =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${String(i).padStart(3, '0')}`, url: `https://x/${i}` }));

describe('leases of an external processor, on Azurite', () => {
  it('leases batches of the declared size, records every result exactly once, and completes the job', async () => {
    const h = jobHarness();
    await h.jobs.processors.declare('thumbs', declare());
    const { job } = await h.jobs.submissions.submit({ processor: 'thumbs', items: items(25) }, undefined);
    expect(job).toMatchObject({ envelopes: 3, route: { kind: 'declared', queue: `${h.names.queuePrefix}-x-thumbs` } });
    // Nothing went to the in-app work queues.
    expect([...(await h.messages()).values()].flat()).toEqual([]);
    const seen: string[] = [];
    for (;;) {
      const lease = await h.jobs.leases.take('thumbs', { holder: 'worker', waitSeconds: 0 });
      if (lease === undefined) break;
      expect(lease.items.length).toBeLessThanOrEqual(10);
      seen.push(...lease.items.map((i) => i.id));
      const report = await h.jobs.leases.complete(
        lease.leaseId,
        lease.items.map((i) => ({ id: i.id, status: 'succeeded' as const, output: { thumb: `${i.id}.webp`, attempt: i.attempt } })),
      );
      expect(report).toMatchObject({ recorded: lease.items.length, retrying: 0 });
      // The same completion again (its answer lost on the way): the first report, not "lease lost".
      expect(await h.jobs.leases.complete(lease.leaseId, [])).toEqual(report);
    }
    expect(seen.sort()).toEqual(items(25).map((i) => i.id));
    const view = await h.jobs.reads.view(job.id);
    expect(view).toMatchObject({ state: 'completed', totals: { items: 25, succeeded: 25, failed: 0, cancelled: 0, pending: 0 } });
    const results = await h.jobs.reads.results(job.id, 'results', undefined, { maxPageSize: 100 });
    expect(results.items.map((r) => r.output)).toEqual(items(25).map((i) => ({ thumb: `${i.id}.webp`, attempt: 1 })));
  });

  it('brings back retried and unmentioned items as their next attempt, fails them past maxAttempts with the reason, and takes fewer items when asked', async () => {
    const h = jobHarness();
    await h.jobs.processors.declare('flaky', declare({ maxAttempts: 2, retry: { delaySeconds: 0, multiplier: 1, maxDelaySeconds: 0 } }));
    const { job } = await h.jobs.submissions.submit({ processor: 'flaky', items: items(6, 'f') }, undefined);
    const first = await h.jobs.leases.take('flaky', { holder: 'worker', waitSeconds: 0, maxItems: 4 });
    expect(first?.items.map((i) => [i.id, i.attempt])).toEqual([
      ['f-000', 1],
      ['f-001', 1],
      ['f-002', 1],
      ['f-003', 1],
    ]);
    // The two items not leased went on in a message of their own.
    const second = await h.jobs.leases.take('flaky', { holder: 'worker', waitSeconds: 0 });
    expect(second?.items.map((i) => i.id)).toEqual(['f-004', 'f-005']);
    await h.jobs.leases.complete(second!.leaseId, [
      { id: 'f-004', status: 'succeeded', output: 1 },
      { id: 'f-005', status: 'failed', code: 'notAnImage', reason: 'a PDF' },
    ]);
    const report = await h.jobs.leases.complete(first!.leaseId, [
      { id: 'f-000', status: 'succeeded' },
      { id: 'f-001', status: 'retry', reason: 'upstream timed out' },
    ]);
    expect(report).toMatchObject({ recorded: 1, retrying: 3 });
    const again = await h.jobs.leases.take('flaky', { holder: 'worker', waitSeconds: 5 });
    expect(again?.items.map((i) => [i.id, i.attempt])).toEqual([
      ['f-001', 2],
      ['f-002', 2],
      ['f-003', 2],
    ]);
    await h.jobs.leases.complete(again!.leaseId, [
      { id: 'f-001', status: 'retry', reason: 'upstream timed out again' },
      { id: 'f-002', status: 'succeeded' },
    ]);
    // f-003 was left out at its last attempt: it fails when its message comes back.
    expect(await h.jobs.leases.take('flaky', { holder: 'worker', waitSeconds: 5 })).toBeUndefined();
    const view = await h.jobs.reads.view(job.id);
    expect(view).toMatchObject({ state: 'completedWithFailures', totals: { succeeded: 3, failed: 3 } });
    const failures = await h.jobs.reads.results(job.id, 'failures', 'failed', { maxPageSize: 10 });
    expect(failures.items.map((f) => [f.id, f.code, f.attempts])).toEqual([
      ['f-001', 'retriesExhausted', 2],
      ['f-003', 'noResult', 2],
      ['f-005', 'notAnImage', 1],
    ]);
    expect(failures.items[0]?.reason).toBe('upstream timed out again (gave up after 2 attempts)');
  });

  it('refuses a completion after the lease ran out or after an extension spent it (409, nothing recorded), results for items of another lease (400), a forged lease id (404), and cancels', async () => {
    const clock = new ManualClock(Date.now());
    const h = jobHarness({ clock });
    await h.jobs.processors.declare('slow', declare({ batchSize: 2 }));
    const { job } = await h.jobs.submissions.submit({ processor: 'slow', items: items(4, 's') }, undefined);
    const a = await h.jobs.leases.take('slow', { holder: 'worker', waitSeconds: 0 });
    const b = await h.jobs.leases.take('slow', { holder: 'worker', waitSeconds: 0 });
    const foreign = await refusal(h.jobs.leases.complete(a!.leaseId, [{ id: b!.items[0]!.id, status: 'succeeded' }]));
    expect(foreign).toMatchObject({
      code: 'ValidationFailed',
      issues: [{ path: 'body.results.0.id', message: expect.stringContaining('not an item of this lease') as string }],
    });
    const forged = a!.leaseId.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect((await refusal(h.jobs.leases.complete(forged, []))).code).toBe('NotFound');
    const extended = await h.jobs.leases.extend(a!.leaseId);
    expect((await refusal(h.jobs.leases.complete(a!.leaseId, []))).code).toBe('Conflict');
    await clock.advance(31_000);
    const late = await refusal(
      h.jobs.leases.complete(
        extended.leaseId,
        a!.items.map((i) => ({ id: i.id, status: 'succeeded' as const })),
      ),
    );
    expect(late.code).toBe('Conflict');
    expect(late.message).toMatch(/expired/);
    expect(await h.stores.results.progress(job.id)).toMatchObject({ succeeded: 0, failed: 0 });
    const c = await h.jobs.leases.take('slow', { holder: 'worker', waitSeconds: 0 });
    expect(c).toBeUndefined();
    await h.cancel(job.id);
    expect(await h.jobs.reads.view(job.id)).toMatchObject({
      state: 'cancelled',
      totals: { items: 4, succeeded: 0, cancelled: 4, pending: 0 },
    });
    // Cancelling again answers the same; the job's queued batches are dropped, never leased.
    await h.cancel(job.id);
    expect(await h.jobs.leases.take('slow', { holder: 'worker', waitSeconds: 0 })).toBeUndefined();
  });

  it("answers a lease's length on the app's clock, which need not be the wall clock (a virtual clock a year ahead)", async () => {
    const clock = new ManualClock(Date.now() + 366 * 24 * 3600 * 1000);
    const h = jobHarness({ clock });
    await h.jobs.processors.declare('later', declare({ leaseSeconds: 45 }));
    await h.jobs.submissions.submit({ processor: 'later', items: items(1, 'l') }, undefined);
    const routes = jobsRoutes({ jobs: () => h.jobs, maxRequestBytes: 1024 * 1024, processors: [], queuePrefix: h.names.queuePrefix });
    const take = routes.find((r) => r.name === 'leasesTake')!;
    const res = await callRoute<{ leaseSeconds: number; expiresAt: string }>(take, { params: { name: 'later' }, body: { wait: 0 } });
    expect(res.status).toBe(200);
    expect(res.body.leaseSeconds).toBe(45);
    expect(res.body.expiresAt).toBe(new Date(clock.now() + 45_000).toISOString());
  });

  it('refuses items that do not match the declared item schema with a 400 naming the item and field, storing nothing', async () => {
    const h = jobHarness();
    await h.jobs.processors.declare(
      'typed',
      declare({ itemSchema: { type: 'object', required: ['url'], properties: { url: { type: 'string', format: 'uri' } } } }),
    );
    const bad = [{ id: 'ok', url: 'https://x/1' }, { id: 'no-url' }, { id: 'bad-url', url: 42 }];
    const refused = await refusal(h.jobs.submissions.submit({ processor: 'typed', items: bad }, undefined));
    expect(refused.code).toBe('ValidationFailed');
    expect(refused.issues).toEqual([
      { path: 'body.items.1.url', message: 'item "no-url": field url is required by the processor\'s itemSchema' },
      { path: 'body.items.2.url', message: 'item "bad-url": field url must be string' },
    ]);
    expect(await h.rows('jobs')).toEqual([]);
    const invalid = await refusal(h.jobs.processors.declare('broken', declare({ itemSchema: { type: 'object', propertiez: {} } })));
    expect(invalid).toMatchObject({
      code: 'ValidationFailed',
      issues: [{ path: 'body.itemSchema', message: expect.stringMatching(/propertiez/) as string }],
    });
  });
});

describe('a cancelled job on Azurite', () => {
  it('refuses the leases its workers hold (409), and records its open items as cancelled while a finished one keeps its result', async () => {
    const h = jobHarness();
    await h.jobs.processors.declare('cx', declare({ batchSize: 2 }));
    const { job } = await h.jobs.submissions.submit({ processor: 'cx', items: items(4, 'c') }, undefined);
    const a = await h.jobs.leases.take('cx', { holder: 'worker', waitSeconds: 0 });
    const b = await h.jobs.leases.take('cx', { holder: 'worker', waitSeconds: 0 });
    await h.jobs.leases.complete(a!.leaseId, [{ id: a!.items[0]!.id, status: 'succeeded', output: 'done' }]);
    const cancelled = await h.cancel(job.id);
    expect(cancelled).toMatchObject({ phase: 'cancelled', succeeded: 1, cancelled: 3 });
    const refused = await refusal(
      h.jobs.leases.complete(
        b!.leaseId,
        b!.items.map((i) => ({ id: i.id, status: 'succeeded' as const })),
      ),
    );
    expect(refused).toMatchObject({ code: 'Conflict', message: expect.stringMatching(/cancelled/) as string });
    const results = await h.jobs.reads.results(job.id, 'results', undefined, { maxPageSize: 10 });
    expect(results.items.map((r) => [r.id, r.status])).toEqual([
      ['c-000', 'succeeded'],
      ['c-001', 'cancelled'],
      ['c-002', 'cancelled'],
      ['c-003', 'cancelled'],
    ]);
    expect((await refusal(h.cancel(job.id).then(() => h.jobs.submissions.retryFailed(job.id)))).code).toBe('Conflict');
  });
});
