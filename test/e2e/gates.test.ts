/**
 * Gates over HTTP only, against a devhost child process (or E2E_BASE_URL). A thousand gated durable
 * runs wait and one release lets every one of them proceed exactly once; runs that start during and
 * after the release proceed too; concurrent releases release once; generations keep old and new apart;
 * long-poll and SSE clients hear the release; bad input and missing keys change nothing; a scheduled
 * release fires on the virtual clock. A run with a job action submits its job once released, and the
 * job completes.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import type { GateView } from '../../shared/gates/schemas';
import { mapLimited } from '../../shared/mapLimited';
import { transactions } from '../support/billing';
import { describeDevhost, type E2eHost, startE2eHost } from './support/harness';
import { expectProblem, type JsonResponse, readSse, requestJson } from './support/http';
import { unique } from './support/names';
import { until as waitUntil } from './support/wait';

interface RunStarted {
  runId: string;
  id: string;
  created: boolean;
  statusUri: string;
}

interface RunOutput {
  generation: number;
  late: boolean;
  release: { generation: number; at: string; by: string; how: string };
  proceededAt: string;
  action: { type: string; jobId?: string };
}

interface InstanceStatus {
  instanceId: string;
  runtimeStatus: string;
  customStatus: { phase?: string; generation?: number } | null;
  output: RunOutput | null;
}

/** Gate waits include a thousand runs; they get longer than the default. */
const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 100): Promise<T> =>
  waitUntil(what, probe, timeoutMs, everyMs);

describe('gates over HTTP', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost({
      env: {
        TALLYHO_GATES_WATCH_INTERVAL_MS: '250',
        TALLYHO_GATES_MAX_WAITERS: '2000',
        // The job action's envelopes go to queues only this host polls, and promptly.
        TALLYHO_JOBS_QUEUE_PREFIX: unique('gj'),
        AzureFunctionsJobHost__extensions__queues__maxPollingInterval: '00:00:00.200',
      },
    });
  });
  afterAll(async () => {
    await host.stop();
  });

  const create = (name: string, body?: unknown) =>
    requestJson<GateView>(host, 'PUT', `/api/gates/${name}`, { key: 'admin', ...(body === undefined ? {} : { body }) });
  const read = (name: string, headers?: Record<string, string>) =>
    requestJson<GateView>(host, 'GET', `/api/gates/${name}`, headers ? { headers } : {});
  const release = (name: string, by = 'alice') =>
    requestJson<{ outcome: string; gate: GateView }>(host, 'POST', `/api/gates/${name}/release`, { key: 'admin', body: { by } });
  const reset = (name: string, body?: unknown) =>
    requestJson<{ outcome: string; gate: GateView; carried: number }>(host, 'POST', `/api/gates/${name}/reset`, {
      key: 'admin',
      ...(body === undefined ? {} : { body }),
    });
  const startRun = (name: string, body?: unknown) =>
    requestJson<RunStarted>(host, 'POST', `/api/gates/${name}/runs`, body === undefined ? {} : { body });
  const audit = (name: string) =>
    requestJson<{ kind: string; generation: number; by: string; how: string }[]>(host, 'GET', `/api/gates/${name}/audit`, { key: 'admin' });

  const functionKey = (): Record<string, string> => ({ 'x-functions-key': host.keys.function ?? '' });

  /** Every gated run of a gate, through the Durable HTTP API's instance query. */
  async function runsOf(name: string): Promise<InstanceStatus[]> {
    const all: InstanceStatus[] = [];
    let token: string | null = null;
    do {
      // The Durable HTTP API takes the master key (or the extension's system key), on the real host as here.
      const headers: Record<string, string> = { 'x-functions-key': host.keys.admin ?? '' };
      if (token !== null) headers['x-ms-continuation-token'] = token;
      const res = await fetch(
        host.url(`/runtime/webhooks/durabletask/instances?instanceIdPrefix=${encodeURIComponent(`gate:${name}:run:`)}&top=500`),
        {
          headers,
        },
      );
      expect(res.status).toBe(200);
      all.push(...((await res.json()) as InstanceStatus[]));
      token = res.headers.get('x-ms-continuation-token');
    } while (token !== null && token !== '');
    return all;
  }

  /** Through the app's own run status route, as a run starter (function key) follows it. */
  async function runStatus(started: RunStarted): Promise<Omit<InstanceStatus, 'instanceId'>> {
    const res = await requestJson<Omit<InstanceStatus, 'instanceId'>>(host, 'GET', started.statusUri);
    expect(res.status).toBe(200);
    return res.body;
  }

  const waitingCount = (name: string, n: number) =>
    until(`${n} runs waiting on ${name}`, async () => ((await read(name)).body.waiters.waiting >= n ? true : undefined), 60_000, 200);

  test('1,000 waiting runs, one release: every run proceeds exactly once; runs started during and after it proceed too', async () => {
    const name = unique('hounds');
    expect((await create(name)).status).toBe(201);
    // Without a runId a start is one Durable call; the instance ids come back in the answers.
    const started = await mapLimited(
      Array.from({ length: 1000 }, (_, i) => i),
      32,
      () => startRun(name),
    );
    expect(started.map((r) => r.status)).toEqual(started.map(() => 202));
    const waiting = started.map((r) => r.body.id);
    await waitingCount(name, 1000);

    const during = mapLimited(
      Array.from({ length: 20 }, (_, i) => i),
      20,
      () => startRun(name),
    );
    const released = await release(name);
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ outcome: 'released', gate: { state: 'released', generation: 1, releasedBy: 'alice' } });
    await during;
    const after = (
      await mapLimited(
        Array.from({ length: 20 }, (_, i) => i),
        20,
        () => startRun(name),
      )
    ).map((r) => r.body.id);

    const runs = await until(
      'every run to complete',
      async () => {
        const list = await runsOf(name);
        return list.length === 1040 && list.every((r) => r.runtimeStatus === 'Completed') ? list : undefined;
      },
      90_000,
      500,
    );
    const byId = new Map(runs.map((r) => [r.instanceId, r]));
    expect(byId.size).toBe(1040);
    const releasedAt = released.body.gate.releasedAt;
    for (const r of runs) {
      expect(r.output).toMatchObject({ generation: 1, release: { generation: 1, at: releasedAt, by: 'alice', how: 'api' } });
      expect(Date.parse(r.output?.proceededAt ?? '')).toBeGreaterThanOrEqual(Date.parse(releasedAt ?? ''));
    }
    expect(waiting.every((id) => byId.get(id)?.output?.late === false)).toBe(true);
    expect(after.map((id) => byId.get(id)?.output?.late)).toEqual(after.map(() => true));

    // Each run reports proceeding once; a run proceeding twice would push the count past 1040.
    const gate = await until('every proceeded report', async () => {
      const g = (await read(name)).body;
      return g.waiters.proceeded >= 1040 ? g : undefined;
    });
    await sleep(500);
    const settled = (await read(name)).body;
    expect(settled.waiters).toEqual({
      waiting: 0,
      registered: settled.waiters.registered,
      late: 1040 - settled.waiters.registered,
      proceeded: 1040,
    });
    expect(settled.waiters.registered).toBeGreaterThanOrEqual(1000);
    expect(gate.state).toBe('released');
  }, 180_000);

  test('concurrent release calls release once: the same who and when for every caller, one audit record', async () => {
    const name = unique('race');
    await create(name);
    const run = await startRun(name);
    await waitingCount(name, 1);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => release(name, `admin-${i}`)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const first = answers[0]?.body.gate;
    for (const a of answers)
      expect(a.body.gate).toMatchObject({ releasedAt: first?.releasedAt, releasedBy: first?.releasedBy, generation: 1 });
    const again = await release(name, 'latecomer');
    expect(again.body).toMatchObject({
      outcome: 'alreadyReleased',
      gate: { releasedAt: first?.releasedAt, releasedBy: first?.releasedBy },
    });
    const listed = await requestJson<{ items: GateView[] }>(host, 'GET', '/api/gates?limit=1000', { key: 'admin' });
    expect(listed.body.items.find((g) => g.name === name)).toMatchObject({ state: 'released', releasedAt: first?.releasedAt });
    const records = (await audit(name)).body;
    expect(records.filter((r) => r.kind === 'release')).toEqual([
      expect.objectContaining({ generation: 1, by: first?.releasedBy, how: 'api' }),
    ]);
    await until('the run to complete', async () => ((await runStatus(run.body)).runtimeStatus === 'Completed' ? true : undefined));
  });

  test('generations: a reset gate is closed again, a stale release event is ignored, the new release counts; concurrent resets make one generation', async () => {
    const name = unique('gens');
    await create(name);
    await release(name);
    const resets = await Promise.all([reset(name), reset(name), reset(name)]);
    expect(resets.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(resets.map((r) => r.body.gate.generation)).toEqual([2, 2, 2]);
    expect((await read(name)).body).toMatchObject({ state: 'closed', generation: 2, releasedAt: null });

    const run = (await startRun(name, { runId: 'worker' })).body;
    await waitingCount(name, 1);
    // An event of generation 1 (e.g. a late duplicate) must not release a generation-2 waiter.
    const stale = { gate: name, generation: 1, release: { generation: 1, at: new Date().toISOString(), by: 'ghost', how: 'api' } };
    // Raised through the Durable HTTP API, as an operator holding the master (or Durable system) key could.
    const raised = await fetch(host.url(`/runtime/webhooks/durabletask/instances/${encodeURIComponent(run.id)}/raiseEvent/GateReleased`), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-functions-key': host.keys.admin ?? '' },
      body: JSON.stringify(stale),
    });
    expect(raised.status).toBe(202);
    await sleep(500);
    expect(await runStatus(run)).toMatchObject({ runtimeStatus: 'Running', customStatus: { phase: 'waiting', generation: 2 } });

    expect((await release(name, 'bob')).body).toMatchObject({ outcome: 'released', gate: { generation: 2, releasedBy: 'bob' } });
    const done = await until('the run to proceed', async () => {
      const s = await runStatus(run);
      return s.runtimeStatus === 'Completed' ? s : undefined;
    });
    expect(done.output).toMatchObject({ generation: 2, late: false, release: { by: 'bob' } });

    // Starting the same runId again returns the first run.
    expect((await startRun(name, { runId: 'worker' })).body).toMatchObject({ created: false, id: run.id });
    const kinds = (await audit(name)).body.map((r) => `${r.generation}:${r.kind}`);
    expect(kinds).toEqual(['1:create', '1:release', '2:reset', '2:release']);
  });

  test('a reset of a closed gate carries its waiting runs into the new generation', async () => {
    const name = unique('carry');
    await create(name);
    const run = (await startRun(name)).body;
    await waitingCount(name, 1);
    expect((await reset(name)).body).toMatchObject({ outcome: 'reset', carried: 1, gate: { generation: 2, waiters: { waiting: 1 } } });
    await release(name);
    const done = await until('the carried run to proceed', async () => {
      const s = await runStatus(run);
      return s.runtimeStatus === 'Completed' ? s : undefined;
    });
    expect(done.output).toMatchObject({ generation: 2 });
  });

  test('long-poll and SSE clients get the current state first and then the release; an unchanged gate answers 304', async () => {
    const name = unique('watch');
    await create(name);
    const first = await read(name);
    const etag = first.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"g1\.c\./);
    expect((await read(name, { 'if-none-match': etag })).status).toBe(304);

    const timedOut = await requestJson<{ released: boolean; timedOut: boolean }>(host, 'GET', `/api/gates/${name}/wait?timeout=1`);
    expect(timedOut.body).toMatchObject({ released: false, timedOut: true });

    const polls = Array.from({ length: 20 }, () =>
      requestJson<{ released: boolean; timedOut: boolean; gate: GateView }>(host, 'GET', `/api/gates/${name}/wait?timeout=60`),
    );
    const streams = Array.from({ length: 5 }, () =>
      readSse(host.url(`/api/gates/${name}/events`), { headers: functionKey(), maxEvents: 2, timeoutMs: 30_000 }),
    );
    await sleep(1000);
    const released = await release(name);
    const [pollAnswers, streamAnswers] = await Promise.all([Promise.all(polls), Promise.all(streams)]);
    for (const p of pollAnswers)
      expect(p.body).toMatchObject({
        released: true,
        timedOut: false,
        gate: { state: 'released', releasedAt: released.body.gate.releasedAt },
      });
    for (const s of streamAnswers) {
      expect(s.status).toBe(200);
      expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(s.events.map((e) => e.event)).toEqual(['state', 'released']);
      expect(JSON.parse(s.events[1]?.data ?? '{}')).toMatchObject({ state: 'released', generation: 1 });
    }
    expect((await read(name, { 'if-none-match': etag })).status).toBe(200);

    // Read-first: a released gate answers at once; a late SSE subscriber gets the release as its first event.
    const late = await requestJson<{ released: boolean }>(host, 'GET', `/api/gates/${name}/wait?timeout=60`);
    expect(late.body.released).toBe(true);
    const lateStream = await readSse(host.url(`/api/gates/${name}/events`), { headers: functionKey(), maxEvents: 1 });
    expect(lateStream.events.map((e) => e.event)).toEqual(['released']);
    // Waiting for the next generation's release does not return the old one.
    await reset(name);
    const next = await requestJson<{ released: boolean; timedOut: boolean }>(host, 'GET', `/api/gates/${name}/wait?timeout=1&generation=2`);
    expect(next.body).toMatchObject({ released: false, timedOut: true });
  });

  test('a released run with a job action submits one job, which completes; starting the run again submits nothing more', async () => {
    const name = unique('jobgate');
    expect((await create(name)).status).toBe(201);
    const items = transactions(40, 21, 'gated');
    const body = { runId: 'month-end', action: { type: 'job', processor: 'billing', items } };
    const started = await startRun(name, body);
    expect(started.status).toBe(202);
    await waitingCount(name, 1);
    expect((await release(name)).status).toBe(200);
    const done = await until('the run to complete', async () => {
      const status = await runStatus(started.body);
      expect(status.runtimeStatus).not.toBe('Failed');
      return status.runtimeStatus === 'Completed' ? status : undefined;
    });
    const jobId = done.output?.action.jobId;
    expect(done.output?.action).toEqual({ type: 'job', jobId: expect.any(String) });
    const job = await until(
      `job ${jobId} to complete`,
      async () => {
        const res = await requestJson<{ id: string; state: string; totals: Record<string, number> }>(host, 'GET', `/api/jobs/${jobId}`);
        expect(res.status).toBe(200);
        return res.body.state === 'accepted' || res.body.state === 'running' ? undefined : res.body;
      },
      60_000,
      200,
    );
    expect(job).toMatchObject({ id: jobId, state: 'completed', totals: { items: 40, succeeded: 40, failed: 0, pending: 0 } });
    const again = await startRun(name, body);
    expect(again.body).toMatchObject({ runId: 'month-end', created: false });
    expect((await runStatus(again.body)).output?.action).toEqual({ type: 'job', jobId });
  }, 90_000);

  test('bad names, times, actions and timeouts are 400 and change nothing', async () => {
    for (const bad of ['bad%20name', 'a'.repeat(64), 'a%3Ab', '-lead']) {
      expectProblem(await create(bad), 400, 'ValidationFailed');
      expectProblem(await read(bad), 400, 'ValidationFailed');
      expectProblem(await release(bad), 400, 'ValidationFailed');
      expectProblem(await startRun(bad), 400, 'ValidationFailed');
    }
    const name = unique('bad');
    const past = new Date(Date.now() - 60_000).toISOString();
    const tooFar = new Date(Date.now() + 400 * 24 * 3600_000).toISOString();
    for (const releaseAt of ['tomorrow', '2026-13-01T00:00:00Z', past, tooFar, 1234]) {
      const problem = expectProblem(await create(name, { releaseAt }), 400, 'ValidationFailed');
      expect(problem.issues?.[0]?.path).toBe('body.releaseAt');
    }
    expectProblem(await create(name, { releaseAt: new Date(Date.now() + 3600_000).toISOString(), colour: 'red' }), 400);
    expectProblem(await read(name), 404, 'NotFound');
    expectProblem(await startRun(name), 404, 'NotFound');
    expectProblem(await release(name), 404, 'NotFound');

    await create(name);
    const bodies: unknown[] = [
      { action: { type: 'webhook', url: 'https://x' } },
      { action: { type: 'none', extra: 1 } },
      { action: { type: 'job', processor: 'payroll', items: transactions(1, 5, 'badjob') } },
      { action: { type: 'job', processor: 'billing', items: [] } },
      { runId: 'a b' },
      '{not json',
    ];
    for (const body of bodies) expectProblem(await startRun(name, body), 400, 'ValidationFailed');
    // The jobs service's own checks, run before the run starts, name the field inside the action.
    const [t0, t1] = transactions(2, 5, 'badjob');
    const duplicate = expectProblem(await startRun(name, { action: { type: 'job', processor: 'billing', items: [t0, t1, t0] } }), 400);
    expect(duplicate.issues).toEqual([{ path: 'body.action.items.2.id', message: expect.stringContaining('items.0') }]);
    expectProblem(await requestJson(host, 'GET', `/api/gates/${name}/wait?timeout=500`), 400, 'ValidationFailed');
    expectProblem(await requestJson(host, 'GET', `/api/gates/${name}/wait?timeout=-1`), 400, 'ValidationFailed');
    expectProblem(await reset(name, { releaseAt: past }), 400, 'ValidationFailed');
    expect((await create(name, { releaseAt: new Date(Date.now() + 3600_000).toISOString() })).status).toBe(409);
    expect((await read(name)).body).toMatchObject({
      state: 'closed',
      generation: 1,
      releaseAt: null,
      waiters: { registered: 0, waiting: 0 },
    });
    expect((await runsOf(name)).length).toBe(0);
  });
});

describe('gates with keys enforced', () => {
  let host: E2eHost;
  beforeAll(async () => {
    host = await startE2eHost();
  });
  afterAll(async () => {
    await host.stop();
  });

  test('create, release and reset need the admin key; without it they are refused and change nothing', async () => {
    const name = unique('keys');
    const admin = (method: string, path: string, key: 'admin' | 'function' | 'none', body?: unknown): Promise<JsonResponse> =>
      requestJson(host, method, path, { key, ...(body === undefined ? {} : { body }) });
    expect((await admin('PUT', `/api/gates/${name}`, 'none')).status).toBe(401);
    expect((await admin('PUT', `/api/gates/${name}`, 'function')).status).toBe(401);
    expect((await admin('GET', `/api/gates/${name}`, 'function')).status).toBe(404);
    expect((await admin('PUT', `/api/gates/${name}`, 'admin')).status).toBe(201);

    for (const key of ['none', 'function'] as const) {
      expect((await admin('POST', `/api/gates/${name}/release`, key, { by: 'intruder' })).status).toBe(401);
      expect((await admin('POST', `/api/gates/${name}/reset`, key)).status).toBe(401);
      expect((await admin('GET', `/api/gates/${name}/audit`, key)).status).toBe(401);
    }
    expect((await admin('GET', `/api/gates/${name}`, 'none')).status).toBe(401);
    expect((await admin('GET', `/api/gates/${name}`, 'function')).body).toMatchObject({ state: 'closed', generation: 1, releasedBy: null });
    expect((await admin('GET', `/api/gates/${name}/audit`, 'admin')).body).toEqual([expect.objectContaining({ kind: 'create' })]);
  });
});

describeDevhost('gates on the virtual clock', () => {
  let host: E2eHost;
  beforeAll(async () => {
    host = await startE2eHost({ virtualClock: true });
  });
  afterAll(async () => {
    await host.stop();
  });

  test('a scheduled releaseAt releases the gate when the clock reaches it; a reset cancels the schedule', async () => {
    const name = unique('sched');
    const releaseAt = new Date(Date.now() + 3600_000);
    releaseAt.setUTCMilliseconds(0);
    const created = await requestJson<GateView>(host, 'PUT', `/api/gates/${name}`, {
      key: 'admin',
      body: { releaseAt: releaseAt.toISOString(), by: 'ops' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ state: 'closed', releaseAt: releaseAt.toISOString() });
    await host.advanceClock(30 * 60_000);
    expect((await requestJson<GateView>(host, 'GET', `/api/gates/${name}`)).body.state).toBe('closed');
    await host.advanceClock(31 * 60_000);
    expect((await requestJson<GateView>(host, 'GET', `/api/gates/${name}`)).body).toMatchObject({
      state: 'released',
      releasedAt: releaseAt.toISOString(),
      releasedBy: 'ops',
      releaseHow: 'schedule',
    });

    const cancelled = unique('cancel');
    await requestJson(host, 'PUT', `/api/gates/${cancelled}`, {
      key: 'admin',
      body: { releaseAt: new Date(Date.now() + 3600_000).toISOString() },
    });
    expect(
      (await requestJson<{ gate: GateView }>(host, 'POST', `/api/gates/${cancelled}/reset`, { key: 'admin' })).body.gate,
    ).toMatchObject({
      generation: 2,
      releaseAt: null,
    });
    await host.advanceClock(3 * 3600_000);
    expect((await requestJson<GateView>(host, 'GET', `/api/gates/${cancelled}`)).body).toMatchObject({ state: 'closed', generation: 2 });
  });
});
