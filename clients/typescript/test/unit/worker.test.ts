import { JobWorker } from '../../src/worker';
import { fakeTransport } from '../support/fakeTransport';
import { json, problem } from '../support/fakeFetch';

const lease = (id: string, items: string[]) => ({
  leaseId: id,
  processor: 'thumbs',
  expiresAt: '2030-01-01T00:00:00Z',
  leaseSeconds: 30,
  items: items.map((item) => ({ id: item, jobId: 'j1', attempt: 1, data: { url: item } })),
  links: {},
});

const tick = () => new Promise((r) => setImmediate(r));

describe('JobWorker', () => {
  test('leases, hands the batch to the handler, completes with its results, and drains on stop', async () => {
    let leases = 0;
    const { transport, requests } = fakeTransport((r) => {
      if (r.path.endsWith('/leases')) return ++leases === 1 ? json(200, lease('L1', ['a', 'b'])) : new Response(null, { status: 204 });
      return json(200, { recorded: 2, alreadyFinal: 0, retrying: 0, jobFinished: false });
    });
    const seen: string[][] = [];
    const worker = new JobWorker(
      transport,
      'thumbs',
      (items) => {
        seen.push(items.map((i) => i.id));
        return Promise.resolve(items.map((i) => ({ id: i.id, status: 'succeeded' as const, output: { thumb: `${i.id}.webp` } })));
      },
      { batchSize: 10, waitSeconds: 5 },
    );
    for (let i = 0; i < 20 && worker.stats.completed === 0; i++) await tick();
    await worker.stop();
    expect(seen).toEqual([['a', 'b']]);
    expect(requests[0]).toMatchObject({ method: 'POST', path: 'processors/thumbs/leases', body: { wait: 5, maxItems: 10 } });
    const completion = requests.find((r) => r.path.endsWith('/complete'));
    expect(completion).toMatchObject({
      path: 'leases/L1/complete',
      body: {
        results: [
          { id: 'a', status: 'succeeded', output: { thumb: 'a.webp' } },
          { id: 'b', status: 'succeeded', output: { thumb: 'b.webp' } },
        ],
      },
    });
    expect(worker.stats).toMatchObject({ batches: 1, items: 2, completed: 1, lost: 0 });
  });

  test("the handler gets the lease's traceparent (the parent of its spans) and each item's (its job's submission, to link)", async () => {
    const traced = {
      ...lease('L1', ['a']),
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      items: [{ id: 'a', jobId: 'j1', attempt: 1, data: {}, traceparent: '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01' }],
    };
    let leases = 0;
    const { transport } = fakeTransport((r) =>
      r.path.endsWith('/leases')
        ? ++leases === 1
          ? json(200, traced)
          : new Response(null, { status: 204 })
        : json(200, { recorded: 1, alreadyFinal: 0, retrying: 0, jobFinished: true }),
    );
    const seen: { lease?: string; items: (string | undefined)[] }[] = [];
    const worker = new JobWorker(transport, 'thumbs', (items, context) => {
      seen.push({ lease: context.traceparent, items: items.map((i) => i.traceparent) });
      return Promise.resolve(items.map((i) => ({ id: i.id, status: 'succeeded' as const })));
    });
    for (let i = 0; i < 20 && worker.stats.completed === 0; i++) await tick();
    await worker.stop();
    expect(seen).toEqual([{ lease: traced.traceparent, items: [traced.items[0]?.traceparent] }]);
  });

  test('stop aborts the open lease request (the long poll), so a stopped worker leaves no request of its own waiting', async () => {
    const { transport, requests } = fakeTransport(
      (r) =>
        new Promise<Response>((_, reject) => {
          // A long poll that never answers: only its abort ends it.
          r.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        }),
    );
    const worker = new JobWorker(transport, 'thumbs', () => Promise.resolve([]), { waitSeconds: 20 });
    for (let i = 0; i < 20 && requests.length === 0; i++) await tick();
    expect(requests[0]).toMatchObject({ path: 'processors/thumbs/leases', body: { wait: 20 } });
    expect(requests[0]?.signal?.aborted).toBe(false);
    await worker.stop();
    expect(requests[0]?.signal?.aborted).toBe(true);
    expect(requests).toHaveLength(1);
    expect(worker.stats).toMatchObject({ batches: 0 });
  });

  test('heartbeats extend the lease under its new id while the handler runs; a handler that throws sends every item back as a retry', async () => {
    let leases = 0;
    const { transport, clock, requests } = fakeTransport((r) => {
      if (r.path.endsWith('/leases')) return ++leases === 1 ? json(200, lease('L1', ['a'])) : new Response(null, { status: 204 });
      if (r.path.endsWith('/extend')) return json(200, { leaseId: `${r.path.split('/')[1]}x`, expiresAt: '2030-01-01T00:00:00Z' });
      return json(200, { recorded: 0, alreadyFinal: 0, retrying: 1, jobFinished: false });
    });
    let release: () => void = () => undefined;
    const worker = new JobWorker(transport, 'thumbs', () => new Promise((_, reject) => (release = () => reject(new Error('disk full')))), {
      heartbeatMs: 10_000,
    });
    for (let i = 0; i < 20; i++) await tick();
    await clock.advance(10_000);
    for (let i = 0; i < 20; i++) await tick();
    await clock.advance(10_000);
    for (let i = 0; i < 20; i++) await tick();
    release();
    for (let i = 0; i < 20 && worker.stats.completed === 0; i++) await tick();
    const stopping = worker.stop();
    await stopping;
    expect(requests.filter((r) => r.path.endsWith('/extend')).map((r) => r.path)).toEqual(['leases/L1/extend', 'leases/L1x/extend']);
    expect(requests.find((r) => r.path.endsWith('/complete'))).toMatchObject({
      path: 'leases/L1xx/complete',
      body: { results: [{ id: 'a', status: 'retry', reason: 'disk full' }] },
    });
  });

  test('a lease lost under a heartbeat (409: ran out, job cancelled) aborts the handler and sends nothing', async () => {
    let leases = 0;
    const { transport, clock, requests } = fakeTransport((r) => {
      if (r.path.endsWith('/leases')) return ++leases === 1 ? json(200, lease('L1', ['a'])) : new Response(null, { status: 204 });
      return problem(409, 'Conflict');
    });
    let aborted = false;
    const worker = new JobWorker(
      transport,
      'thumbs',
      (_items, { abortSignal }) =>
        new Promise((resolve) => {
          abortSignal.addEventListener('abort', () => {
            aborted = true;
            resolve([]);
          });
        }),
      { heartbeatMs: 5000 },
    );
    for (let i = 0; i < 20; i++) await tick();
    await clock.advance(5000);
    for (let i = 0; i < 40 && worker.stats.lost === 0; i++) await tick();
    await worker.stop();
    expect(aborted).toBe(true);
    expect(worker.stats).toMatchObject({ lost: 1, completed: 0 });
    expect(requests.some((r) => r.path.endsWith('/complete'))).toBe(false);
  });

  test('a 404 on the processor ends the worker with an error naming it (before: it polled forever and said nothing)', async () => {
    const { transport, requests } = fakeTransport(() => problem(404, 'NotFound'));
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const worker = new JobWorker(transport, 'thmubs', () => Promise.resolve([]), { concurrency: 2 });
      await expect(worker.done).rejects.toMatchObject({
        name: 'TallyhoError',
        status: 404,
        message: expect.stringContaining("processor 'thmubs' was not found"),
      });
      await expect(worker.stop()).rejects.toMatchObject({ status: 404 });
      // Each loop asked once and stopped: no retry loop behind the 404.
      expect(requests.filter((r) => r.path === 'processors/thmubs/leases')).toHaveLength(2);
    } finally {
      warn.mockRestore();
    }
  });

  test('without onError the first error of each kind is logged, its repeats are not (before: every error was silently ignored)', async () => {
    let leases = 0;
    const { transport, clock } = fakeTransport((r) => {
      if (r.path.endsWith('/leases'))
        return ++leases <= 3
          ? problem(403, 'Forbidden')
          : leases === 4
            ? problem(400, 'ValidationFailed')
            : new Response(null, { status: 204 });
      return json(200, {});
    });
    const lines: string[] = [];
    const warn = jest.spyOn(console, 'warn').mockImplementation((line: string) => void lines.push(line));
    try {
      const worker = new JobWorker(transport, 'thumbs', () => Promise.resolve([]));
      for (let round = 0; round < 10 && leases < 5; round++) {
        for (let i = 0; i < 20; i++) await tick();
        await clock.advance(30_000);
      }
      await worker.stop();
      expect(leases).toBeGreaterThanOrEqual(5);
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/Forbidden:403/);
      expect(lines[1]).toMatch(/ValidationFailed:400/);
    } finally {
      warn.mockRestore();
    }
  });
});
