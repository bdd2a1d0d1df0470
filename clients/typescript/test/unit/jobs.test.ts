import { Jobs } from '../../src/jobs';
import { fakeTransport } from '../support/fakeTransport';
import { type Handler, json } from '../support/fakeFetch';

function jobs(handler: Handler) {
  const { transport, clock, requests } = fakeTransport(handler);
  return { jobs: new Jobs(transport), clock, requests };
}

const jobView = (state: string, succeeded: number) => ({
  id: 'j1',
  state,
  round: 0,
  totals: { items: 3, succeeded, failed: 0, pending: 3 - succeeded },
});

describe('Jobs', () => {
  test('submit sends the processor, the items and an Idempotency-Key, the same one on a retry', async () => {
    let calls = 0;
    const {
      jobs: j,
      clock,
      requests,
    } = jobs(() => {
      calls++;
      if (calls === 1) throw new TypeError('lost');
      return json(202, jobView('accepted', 0));
    });
    const submitting = j.submit('billing', [{ id: 'a' }], { idempotencyKey: 'batch-7' });
    await clock.advance(1000);
    const job = await submitting;
    expect(job.id).toBe('j1');
    expect(requests.map((r) => r.headers['idempotency-key'])).toEqual(['batch-7', 'batch-7']);
    expect(requests[0]?.body).toEqual({ processor: 'billing', items: [{ id: 'a' }] });
  });

  test('progress() yields each change until the job settles', async () => {
    const states = [jobView('accepted', 0), jobView('running', 1), jobView('running', 1), jobView('completed', 3)];
    let read = 0;
    const { jobs: j, clock } = jobs(() => json(200, states[Math.min(read++, states.length - 1)]));
    const seen: string[] = [];
    const following = (async () => {
      for await (const v of j.job('j1').progress({ intervalMs: 500 })) seen.push(`${v.state}:${v.totals.succeeded}`);
    })();
    await clock.advance(5000);
    await following;
    expect(seen).toEqual(['accepted:0', 'running:1', 'completed:3']);
    expect(read).toBe(4);
  });

  test('results() and failures() follow the continuation tokens across pages', async () => {
    const { jobs: j, requests } = jobs((r) => {
      const token = r.query.get('continuationToken');
      if (r.path.endsWith('/failures')) return json(200, { items: [{ id: 'f1' }] });
      return token === null
        ? json(200, { items: [{ id: 'a' }, { id: 'b' }], continuationToken: 'c2' })
        : json(200, { items: [{ id: 'c' }] });
    });
    const ids: string[] = [];
    for await (const r of j.job('j1').results({ maxPageSize: 2, status: 'succeeded' })) ids.push(r.id);
    const failed: string[] = [];
    for await (const f of j.job('j1').failures()) failed.push(f.id);
    expect(ids).toEqual(['a', 'b', 'c']);
    expect(failed).toEqual(['f1']);
    expect(requests.map((r) => r.query.toString())).toEqual([
      'status=succeeded&maxPageSize=2',
      'status=succeeded&maxPageSize=2&continuationToken=c2',
      '',
    ]);
  });

  test('byPage() answers whole pages, resumes from a token and takes its own maxPageSize', async () => {
    const pages: Record<string, { items: { id: string }[]; continuationToken?: string }> = {
      start: { items: [{ id: 'a' }], continuationToken: 't1' },
      t1: { items: [{ id: 'b' }], continuationToken: 't2' },
      t2: { items: [{ id: 'c' }] },
    };
    const { jobs: j, requests } = jobs((r) => json(200, pages[r.query.get('continuationToken') ?? 'start']));
    const seen: unknown[] = [];
    for await (const page of j.job('j1').results({ maxPageSize: 5 }).byPage()) seen.push(page);
    expect(seen).toEqual([pages.start, pages.t1, pages.t2]);
    const resumed: string[] = [];
    for await (const page of j.job('j1').results().byPage({ continuationToken: 't1', maxPageSize: 1 }))
      resumed.push(...page.items.map((i) => i.id));
    expect(resumed).toEqual(['b', 'c']);
    expect(requests.map((r) => r.query.toString())).toEqual([
      'maxPageSize=5',
      'maxPageSize=5&continuationToken=t1',
      'maxPageSize=5&continuationToken=t2',
      'maxPageSize=1&continuationToken=t1',
      'maxPageSize=1&continuationToken=t2',
    ]);
  });
});

describe('beginSubmit (a poller)', () => {
  const accepted = { ...jobView('accepted', 0), statusUri: '/api/jobs/j1' };

  test("waits the 202's Retry-After before each read and ends with the settled job", async () => {
    const reads = [jobView('running', 1), jobView('completed', 3)];
    const {
      jobs: j,
      clock,
      requests,
    } = jobs((r) =>
      r.method === 'POST' ? json(202, accepted, { location: '/api/jobs/j1', 'retry-after': '3' }) : json(200, reads.shift()),
    );
    const poller = await j.beginSubmit('wordcount', [{ id: 'a' }]);
    expect(poller.getOperationState()).toMatchObject({ statusUri: '/api/jobs/j1', intervalMs: 3000, latest: { state: 'accepted' } });
    const done = poller.pollUntilDone();
    await clock.advance(3000);
    await clock.advance(3000);
    await expect(done).resolves.toMatchObject({ state: 'completed' });
    // The 30 s sleeps are each request's own timeout; the others are the poller's waits.
    expect(clock.sleeps.filter((ms) => ms !== 30_000)).toEqual([3000, 3000]);
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST jobs', 'GET jobs/j1', 'GET jobs/j1']);
    // Done: poll() reads nothing more.
    await poller.poll();
    expect(requests).toHaveLength(3);
  });

  test('resumeFrom reads at once and sends no submission', async () => {
    const { jobs: j, requests } = jobs(() => json(200, jobView('completed', 3)));
    const saved = JSON.stringify({ kind: 'jobSubmit', statusUri: '/api/jobs/j1', intervalMs: 2000 });
    const poller = await j.beginSubmit('wordcount', [], { resumeFrom: saved });
    await expect(poller.pollUntilDone()).resolves.toMatchObject({ id: 'j1', state: 'completed' });
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET jobs/j1']);
  });

  test('a status route outside the API is refused', async () => {
    const { jobs: j } = jobs(() => json(202, { ...accepted, statusUri: 'https://elsewhere.example/x' }, { 'retry-after': '1' }));
    await expect(j.beginSubmit('wordcount', [{ id: 'a' }])).rejects.toMatchObject({ code: 'BadResponse' });
  });
});

describe('cancel (a poller)', () => {
  const cancelling = { ...jobView('cancelling', 1), statusUri: '/api/jobs/j1' };

  test('beginCancel sends one DELETE, answers the cancelling job at once, and polls every Retry-After until it is cancelled', async () => {
    const reads = [jobView('cancelling', 1), jobView('cancelled', 1)];
    const {
      jobs: j,
      clock,
      requests,
    } = jobs((r) =>
      r.method === 'DELETE' ? json(202, cancelling, { location: '/api/jobs/j1', 'retry-after': '1' }) : json(200, reads.shift()),
    );
    const poller = await j.job('j1').beginCancel();
    expect(poller.getOperationState()).toMatchObject({
      kind: 'jobCancel',
      statusUri: '/api/jobs/j1',
      intervalMs: 1000,
      latest: { state: 'cancelling' },
    });
    expect(poller.isDone()).toBe(false);
    const done = poller.pollUntilDone();
    await clock.advance(1000);
    await clock.advance(1000);
    await expect(done).resolves.toMatchObject({ state: 'cancelled' });
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['DELETE jobs/j1', 'GET jobs/j1', 'GET jobs/j1']);
    // A poller resumed from its text sends no second DELETE.
    const resumed = await j.job('j1').beginCancel({ resumeFrom: poller.toString() });
    expect(resumed.isDone()).toBe(true);
    expect(requests).toHaveLength(3);
  });

  test('cancel() waits until the job is cancelled; a job already cancelled is done with the answer', async () => {
    const { jobs: j, requests } = jobs(() => json(202, { ...jobView('cancelled', 1), statusUri: '/api/jobs/j1' }, { 'retry-after': '1' }));
    await expect(j.job('j1').cancel()).resolves.toMatchObject({ state: 'cancelled' });
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['DELETE jobs/j1']);
  });
});
