/**
 * Gates over HTTP only, on every host (the devhost, the real Functions host, or E2E_BASE_URL). A
 * thousand gated runs wait (300 on the devhost, which runs the same code paths and assertions for a
 * third of the suite's time, #25) and one release lets every one of them proceed exactly once; runs that
 * start during and after the release proceed too; concurrent releases release once; generations keep
 * old and new apart; long-poll and SSE clients hear the release; bad input and missing keys change
 * nothing; a full generation refuses a start; a kill -9 of the host in the middle of a release loses
 * no run and lets none go twice; a scheduled release fires on the virtual clock. A run with a job
 * action submits its job once released, and the job completes. Runs are observed through the API
 * (`GET /api/gates/{name}`, `GET /api/gates/{name}/runs/{runId}`) only.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import { QueueClient } from '@azure/storage-queue';

import type { GateView } from '../../shared/gates/schemas';
import { issueCredential } from '../../shared/identity/credentials';
import { mapLimited } from '../../shared/mapLimited';
import { queues } from '../../shared/resources';
import { transactions } from '../support/billing';
import { atScale, describeDevhost, type E2eHost, ownHostTest, startE2eHost, storageOf } from './support/harness';
import { killedHostWorkBackWithinAMinute } from './support/crash';
import { periodicTimersOff } from './support/timers';
import { expectProblem, type JsonResponse, pollJson, readSse, requestJson } from './support/http';
import { unique } from './support/names';
import { readAll } from './support/pages';
import { untilEach, until as waitUntil } from './support/wait';
import { queuesPolledPromptly } from './support/jobs';

interface RunStarted {
  runId: string;
  id: string;
  created: boolean;
  statusUri: string;
}

/** A run as its status route answers. */
interface RunView {
  runId: string;
  state: 'waiting' | 'proceeded' | 'failed';
  generation: number;
  late: boolean;
  registeredAt: string;
  proceededAt: string | null;
  release: { generation: number; at: string; by: string; how: string } | null;
  action: { type: string; jobId?: string; messageId?: string } | null;
  failure?: { code: string; reason: string };
}

/** Gate waits include a thousand runs; they get longer than the default. */
/** A wait on a condition (test/e2e/support/wait.ts); the budget is ignored, kept so callers compile. */
const until = <T>(what: string, probe: () => Promise<T | undefined>, _budgetMs?: number, everyMs = 100): Promise<T> =>
  waitUntil(what, probe, undefined, everyMs);

describe('gates over HTTP', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost({
      env: {
        TALLYHO_GATES_WATCH_INTERVAL_MS: '250',
        // One caller starts the thousand runs below and 20 more while the release is made, and a caller
        // holds a quarter of a generation (docs/security.md, "Fair shares"): a share of 2,000.
        TALLYHO_GATES_MAX_WAITERS: '8000',
        // The job action's envelopes go to queues only this host polls, and promptly.
        TALLYHO_JOBS_QUEUE_PREFIX: unique('gj'),
        ...queuesPolledPromptly,
      },
    });
  });
  afterAll(async () => {
    await host.dispose();
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
    readAll<{ kind: string; generation: number; by: string; how: string }>(host, `/api/gates/${name}/audit`, { key: 'admin' });

  const functionKey = (): Record<string, string> => ({ 'x-functions-key': host.keys.function ?? '' });

  /** Through the app's own run status route, as a run starter (function key) follows it. */
  async function runStatus(started: { statusUri: string }): Promise<RunView> {
    const res = await pollJson<RunView>(host, started.statusUri);
    expect(res.status).toBe(200);
    return res.body;
  }

  const runsOf = (name: string, runIds: readonly string[]): Promise<RunView[]> =>
    mapLimited(runIds, 16, (runId) => runStatus({ statusUri: `/api/gates/${name}/runs/${runId}` }));

  const waitingCount = (name: string, n: number) =>
    until(`${n} runs waiting on ${name}`, async () => ((await read(name)).body.waiters.waiting >= n ? true : undefined), undefined, 200);

  const waitingRuns = atScale(1000, 300);
  test(`${waitingRuns.toLocaleString('en')} waiting runs, one release: every run proceeds exactly once; runs started during and after it proceed too`, async () => {
    const name = unique('hounds');
    expect((await create(name)).status).toBe(201);
    // Without a runId the app names the run; the ids come back in the answers.
    const started = await mapLimited(
      Array.from({ length: waitingRuns }, (_, i) => i),
      32,
      () => startRun(name),
    );
    expect(started.map((r) => r.status)).toEqual(started.map(() => 202));
    const waiting = started.map((r) => r.body.runId);
    expect(new Set(waiting).size).toBe(waitingRuns);
    await waitingCount(name, waitingRuns);
    expect((await runsOf(name, waiting.slice(0, 50))).every((r) => r.state === 'waiting' && r.generation === 1)).toBe(true);

    const during = mapLimited(
      Array.from({ length: 20 }, (_, i) => i),
      20,
      () => startRun(name),
    );
    const released = await release(name);
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ outcome: 'released', gate: { state: 'released', generation: 1, releasedBy: 'alice' } });
    const duringIds = (await during).map((r) => r.body.runId);
    const after = (
      await mapLimited(
        Array.from({ length: 20 }, (_, i) => i),
        20,
        () => startRun(name),
      )
    ).map((r) => r.body.runId);

    const all = [...waiting, ...duringIds, ...after];
    expect(new Set(all).size).toBe(waitingRuns + 40);
    await untilEach(
      'every run to proceed',
      all,
      async (runId) => (await runStatus({ statusUri: `/api/gates/${name}/runs/${runId}` })).state === 'proceeded',
    );
    const runs = await runsOf(name, all);
    const releasedAt = released.body.gate.releasedAt;
    for (const r of runs) {
      expect(r).toMatchObject({
        state: 'proceeded',
        generation: 1,
        release: { generation: 1, at: releasedAt, by: 'alice', how: 'api' },
        action: { type: 'none' },
      });
      expect(Date.parse(r.proceededAt ?? '')).toBeGreaterThanOrEqual(Date.parse(releasedAt ?? ''));
    }
    const byId = new Map(runs.map((r) => [r.runId, r]));
    expect(waiting.every((id) => byId.get(id)?.late === false && byId.get(id)?.proceededAt === releasedAt)).toBe(true);
    expect(after.map((id) => byId.get(id)?.late)).toEqual(after.map(() => true));

    // Each run counts once: a run registered or let go twice would push the counts past the runs started.
    const settled = (await read(name)).body;
    expect(settled.waiters).toEqual({
      waiting: 0,
      registered: settled.waiters.registered,
      late: waitingRuns + 40 - settled.waiters.registered,
      proceeded: waitingRuns + 40,
    });
    expect(settled.waiters.registered).toBeGreaterThanOrEqual(waitingRuns);
    expect(settled.state).toBe('released');
  });

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
    const listed = await readAll<GateView>(host, '/api/gates', { key: 'admin' });
    expect(listed.find((g) => g.name === name)).toMatchObject({ state: 'released', releasedAt: first?.releasedAt });
    const records = await audit(name);
    expect(records.filter((r) => r.kind === 'release')).toEqual([
      expect.objectContaining({ generation: 1, by: first?.releasedBy, how: 'api' }),
    ]);
    expect(await runStatus(run.body)).toMatchObject({ state: 'proceeded', generation: 1, late: false, release: { by: first?.releasedBy } });
  });

  test('generations: a reset gate is closed again, a stale release event is ignored, the new release counts; concurrent resets make one generation', async () => {
    const name = unique('gens');
    await create(name);
    await release(name);
    const resets = await Promise.all([reset(name), reset(name), reset(name)]);
    expect(resets.map((r) => r.status)).toEqual([200, 200, 200]);
    // Resets that overlap at the host join one another (alreadyReset, with the generation the other
    // made); one that reaches the app after another has finished resets that new generation in turn.
    // A loaded real host need not run the three calls at the same time (once it ran them [2, 3, 3]), so
    // the test holds what every interleaving keeps: each new generation made by exactly one reset, and
    // every answer naming one of them. The join itself, with calls that certainly overlap:
    // test/integration/gates/service.test.ts.
    const made = resets
      .filter((r) => r.body.outcome === 'reset')
      .map((r) => r.body.gate.generation)
      .sort((a, b) => a - b);
    expect(made).toEqual(Array.from({ length: made.length }, (_, i) => i + 2));
    expect(made.length).toBeGreaterThanOrEqual(1);
    for (const r of resets) expect(made).toContain(r.body.gate.generation);
    const generation = 1 + made.length;
    expect((await read(name)).body).toMatchObject({ state: 'closed', generation, releasedAt: null });

    const run = (await startRun(name, { runId: 'worker' })).body;
    await waitingCount(name, 1);
    // A release of generation 1 (a late duplicate, an old schedule) must not release the new one: started
    // through the Durable HTTP API, as an operator holding the master (or Durable system) key could.
    const stale = {
      gate: name,
      generation: 1,
      at: new Date().toISOString(),
      by: 'ghost',
      how: 'api',
      announce: false,
      actions: 1,
      from: 1,
      batchSize: 50,
    };
    const started = await fetch(host.url(`/runtime/webhooks/durabletask/orchestrators/gateRelease/${unique('stale')}`), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-functions-key': host.keys.admin ?? '' },
      body: JSON.stringify(stale),
    });
    expect(started.status).toBe(202);
    const staleStatus = await until('the stale release to finish', async () => {
      const res = await fetch((started.headers.get('location') ?? '').replace(/^https?:\/\/[^/]+/, host.baseUrl), {
        headers: { 'x-functions-key': host.keys.admin ?? '' },
      });
      const body = (await res.json()) as { runtimeStatus: string; output: unknown };
      return body.runtimeStatus === 'Completed' || body.runtimeStatus === 'Failed' ? body : undefined;
    });
    expect(staleStatus).toMatchObject({ runtimeStatus: 'Completed', output: { actions: { done: 0, failed: 0 } } });
    expect(await runStatus(run)).toMatchObject({ state: 'waiting', generation, proceededAt: null });
    expect((await read(name)).body).toMatchObject({ state: 'closed', generation, releasedAt: null });

    expect((await release(name, 'bob')).body).toMatchObject({ outcome: 'released', gate: { generation, releasedBy: 'bob' } });
    expect(await runStatus(run)).toMatchObject({ state: 'proceeded', generation, late: false, release: { by: 'bob' } });

    // Starting the same runId again returns the first run; with another action it is refused.
    expect((await startRun(name, { runId: 'worker' })).body).toMatchObject({ created: false, id: run.id });
    expectProblem(await startRun(name, { runId: 'worker', action: { type: 'enqueue', payload: 'other' } }), 409, 'Conflict');
    const kinds = (await audit(name)).map((r) => `${r.generation}:${r.kind}`);
    expect(kinds).toEqual(['1:create', '1:release', ...made.map((g) => `${g}:reset`), `${generation}:release`]);
  });

  test('a reset of a closed gate carries its waiting runs into the new generation', async () => {
    const name = unique('carry');
    await create(name);
    const run = (await startRun(name)).body;
    await waitingCount(name, 1);
    expect((await reset(name)).body).toMatchObject({ outcome: 'reset', carried: 1, gate: { generation: 2, waiters: { waiting: 1 } } });
    await release(name);
    expect(await runStatus(run)).toMatchObject({ state: 'proceeded', generation: 2, release: { generation: 2 } });
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
    // Each stream's first event is the current state: once all five have it, they are subscribed.
    let subscribed = 0;
    const streams = Array.from({ length: 5 }, () =>
      readSse(host.url(`/api/gates/${name}/events`), {
        headers: functionKey(),
        maxEvents: 2,
        onEvent: (e) => (subscribed += e.event === 'state' ? 1 : 0),
      }),
    );
    await until('the five event streams to have the current state', () => Promise.resolve(subscribed === 5 ? true : undefined));
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

  // Reads the host's output.
  ownHostTest(
    'a client that hangs up on an event stream or a long poll is let go at once: the gate watch hub drops its listener',
    async () => {
      const name = unique('gone');
      await create(name);
      // The app logs gates.watch.clientGone with the hub's listener count after the client's was dropped.
      const gone = (kind: 'events' | 'wait', from: number) => () =>
        Promise.resolve(
          new RegExp(`"event":"gates\\.watch\\.clientGone","gate":"${name}","kind":"${kind}","listeners":0`).test(host.output().slice(from))
            ? true
            : undefined,
        );

      let from = host.output().length;
      const stream = await readSse(host.url(`/api/gates/${name}/events`), { headers: functionKey(), maxEvents: 1 });
      expect(stream.events.map((e) => e.event)).toEqual(['state']);
      // readSse hangs up after its one event; the stream would otherwise stay open for TALLYHO_GATES_SSE_MAX_SECONDS.
      await until('the event stream let go after its client hung up', gone('events', from));

      const client = new AbortController();
      const poll = fetch(host.url(`/api/gates/${name}/wait?timeout=60`), { headers: functionKey(), signal: client.signal }).catch(
        (err: unknown) => err,
      );
      // Hang up only once the poll is parked (a hang-up before the request reached the app proves
      // nothing, and leaves no log line to wait for). A long poll sends nothing until it answers, so the
      // witness is an event stream: the hub logs how many listeners are left when its client hangs up,
      // and from the moment the poll is parked that is 1, the poll's.
      await until('the long poll to be parked', async () => {
        const mark = host.output().length;
        await readSse(host.url(`/api/gates/${name}/events`), { headers: functionKey(), maxEvents: 1 });
        const left = new RegExp(`"event":"gates\\.watch\\.clientGone","gate":"${name}","kind":"events","listeners":(\\d+)`);
        const listeners = await until('the witness stream let go', () => Promise.resolve(left.exec(host.output().slice(mark))?.[1]));
        return listeners === '1' ? true : undefined;
      });
      from = host.output().length;
      client.abort();
      expect(await poll).toMatchObject({ name: 'AbortError' });
      await until('the long poll let go after its client hung up', gone('wait', from));
    },
  );

  test('a released run with a job action submits one job, which completes; starting the run again submits nothing more', async () => {
    const name = unique('jobgate');
    expect((await create(name)).status).toBe(201);
    const items = transactions(40, 21, 'gated');
    const body = { runId: 'month-end', action: { type: 'job', processor: 'billing', items } };
    const started = await startRun(name, body);
    expect(started.status).toBe(202);
    await waitingCount(name, 1);
    expect((await release(name)).status).toBe(200);
    const done = await until('the run to submit its job', async () => {
      const status = await runStatus(started.body);
      expect(status.state).not.toBe('failed');
      return status.action !== null ? status : undefined;
    });
    const jobId = done.action?.jobId;
    expect(done).toMatchObject({ state: 'proceeded', action: { type: 'job', jobId: expect.any(String) } });
    const job = await until(
      `job ${jobId} to complete`,
      async () => {
        const res = await requestJson<{ id: string; state: string; totals: Record<string, number> }>(host, 'GET', `/api/jobs/${jobId}`);
        expect(res.status).toBe(200);
        return res.body.state === 'accepted' || res.body.state === 'running' ? undefined : res.body;
      },
      undefined,
      200,
    );
    expect(job).toMatchObject({ id: jobId, state: 'completed', totals: { items: 40, succeeded: 40, failed: 0, pending: 0 } });
    const again = await startRun(name, body);
    expect(again.body).toMatchObject({ runId: 'month-end', created: false });
    expect((await runStatus(again.body)).action).toEqual({ type: 'job', jobId });
    // The same run id with other items would be another job: refused, and the run keeps its own.
    expectProblem(await startRun(name, { ...body, action: { ...body.action, items: items.slice(1) } }), 409, 'Conflict');
  });

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
  });
});

/** Signs the callers of the keys-enforced host (shared/identity/credentials.ts): each is an identity of its own. */
const credentialsKey = randomBytes(32);

describe('gates with keys enforced', () => {
  let host: E2eHost;
  /** A submitter's headers: the function key, as the host requires, and a credential naming the caller. */
  const asCaller = async (name: string): Promise<Record<string, string>> => ({
    'x-functions-key': host.keys.function ?? host.keys.admin ?? '',
    authorization: `Bearer ${(await issueCredential(credentialsKey, { name, roles: { admin: false, submitter: true, workerOf: [] } })).credential}`,
  });
  beforeAll(async () => {
    host = await startE2eHost({ env: { TALLYHO_GATES_MAX_WAITERS: '3', TALLYHO_CREDENTIALS_KEY: credentialsKey.toString('base64') } });
  });
  afterAll(async () => {
    await host.dispose();
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
    expect((await admin('GET', `/api/gates/${name}/audit`, 'admin')).body).toEqual({
      items: [expect.objectContaining({ kind: 'create' })],
      unreadable: [],
    });
  });

  // Needs TALLYHO_GATES_MAX_WAITERS of its own. A caller's share of 3 places is one (docs/security.md,
  // "Fair shares"), so five callers start one run each: the generation fills, not a share.
  ownHostTest(
    'a full generation refuses a start with 429 and Retry-After, and registers nothing; after the release starts are late and accepted',
    async () => {
      const name = unique('full');
      expect((await requestJson(host, 'PUT', `/api/gates/${name}`, { key: 'admin' })).status).toBe(201);
      const callers = await Promise.all(Array.from({ length: 5 }, (_, i) => asCaller(`${name}-c${i}`)));
      const starts = await Promise.all(
        callers.map((headers, i) =>
          requestJson<RunStarted>(host, 'POST', `/api/gates/${name}/runs`, { headers, body: { runId: `r${i}` } }),
        ),
      );
      const refused = starts.filter((r) => r.status === 429);
      expect(starts.filter((r) => r.status === 202)).toHaveLength(3);
      expect(refused).toHaveLength(2);
      for (const r of refused) {
        expectProblem(r, 429, 'TooManyRequests');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      const gate = (await requestJson<GateView>(host, 'GET', `/api/gates/${name}`)).body;
      expect(gate.waiters).toMatchObject({ waiting: 3, registered: 3 });
      const refusedIds = starts.flatMap((r, i) => (r.status === 429 ? [i] : []));
      for (const i of refusedIds)
        expect((await requestJson(host, 'GET', `/api/gates/${name}/runs/r${i}`, { key: 'admin' })).status).toBe(404);
      // A repeated start of an accepted run is its own 202 however full the generation is.
      const acceptedIndex = starts.findIndex((r) => r.status === 202);
      const again = await requestJson(host, 'POST', `/api/gates/${name}/runs`, {
        headers: callers[acceptedIndex],
        body: { runId: `r${acceptedIndex}` },
      });
      expect(again.status).toBe(202);
      expect((await requestJson(host, 'POST', `/api/gates/${name}/release`, { key: 'admin' })).status).toBe(200);
      const late = refusedIds[0] as number;
      expect(
        (await requestJson(host, 'POST', `/api/gates/${name}/runs`, { headers: callers[late], body: { runId: `r${late}` } })).status,
      ).toBe(202);
    },
  );

  ownHostTest('one caller holds at most its share of a generation: past it, 429 for it alone; another caller still gets in', async () => {
    const name = unique('share');
    expect((await requestJson(host, 'PUT', `/api/gates/${name}`, { key: 'admin' })).status).toBe(201);
    const [a, b] = [await asCaller(`${name}-a`), await asCaller(`${name}-b`)];
    expect((await requestJson(host, 'POST', `/api/gates/${name}/runs`, { headers: a, body: { runId: 'a1' } })).status).toBe(202);
    const over = await requestJson(host, 'POST', `/api/gates/${name}/runs`, { headers: a, body: { runId: 'a2' } });
    expectProblem(over, 429, 'TooManyRequests');
    expect((await requestJson(host, 'POST', `/api/gates/${name}/runs`, { headers: b, body: { runId: 'b1' } })).status).toBe(202);
    expect((await requestJson<GateView>(host, 'GET', `/api/gates/${name}`)).body.waiters).toMatchObject({ waiting: 2 });
  });
});

describe('a gate release and a crash', () => {
  let host: E2eHost;
  let actions: QueueClient;
  const runs = 600;
  beforeAll(async () => {
    host = await startE2eHost({
      env: {
        // Many small batches, so the release is still fanning out when the host dies.
        TALLYHO_GATES_NOTIFY_BATCH: '10',
        ...killedHostWorkBackWithinAMinute,
      },
    });
    actions = new QueueClient(storageOf(host), queues.gateActions);
    await actions.createIfNotExists();
  });
  afterAll(async () => {
    await host.dispose();
  });

  /** The action messages of `gate` on the shared queue, by run; other gates' messages are left for their tests. */
  async function messagesOf(gate: string, expected: number): Promise<Map<string, string[]>> {
    const byRun = new Map<string, string[]>();
    let quiet = 0;
    while (quiet < 5) {
      const { receivedMessageItems } = await actions.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 2 });
      let mine = 0;
      for (const m of receivedMessageItems) {
        const body = JSON.parse(Buffer.from(m.messageText, 'base64').toString('utf8')) as { gate: string; runId: string };
        if (body.gate !== gate) continue;
        mine++;
        byRun.set(body.runId, [...(byRun.get(body.runId) ?? []), m.messageId]);
        await actions.deleteMessage(m.messageId, m.popReceipt);
      }
      quiet = mine === 0 && byRun.size >= expected ? quiet + 1 : 0;
      if (mine === 0) await sleep(200);
    }
    return byRun;
  }

  ownHostTest(
    'a kill -9 of the host in the middle of a release loses no run and lets none go twice',
    async () => {
      const name = unique('crash');
      expect((await requestJson(host, 'PUT', `/api/gates/${name}`, { key: 'admin' })).status).toBe(201);
      const ids = Array.from({ length: runs }, (_, i) => `r${i}`);
      const started = await mapLimited(ids, 32, (runId) => {
        const i = Number(runId.slice(1));
        return requestJson(host, 'POST', `/api/gates/${name}/runs`, {
          body: { runId, action: i % 2 === 0 ? { type: 'enqueue', payload: i } : { type: 'none' } },
        });
      });
      expect(started.every((r) => r.status === 202)).toBe(true);
      const released = await requestJson<{ gate: GateView }>(host, 'POST', `/api/gates/${name}/release`, {
        key: 'admin',
        body: { by: 'alice' },
      });
      expect(released.status).toBe(200);
      // Kill it as soon as the first actions are out.
      await waitUntil(
        'the first action message',
        async () => ((await actions.peekMessages({ numberOfMessages: 1 })).peekedMessageItems.length > 0 ? true : undefined),
        60_000,
        20,
      );
      await host.restart({ kill: true });

      const view = (runId: string) => requestJson<RunView>(host, 'GET', `/api/gates/${name}/runs/${runId}`);
      await untilEach(
        'every action to be done after the restart',
        ids,
        async (runId) => {
          const { body } = await view(runId);
          return body.state === 'proceeded' && body.action !== null;
        },
        { everyMs: 1000 },
      );
      const all = (await mapLimited(ids, 32, view)).map((r) => r.body);
      expect(all.filter((r) => r.action === null)).toEqual([]);
      const releasedAt = released.body.gate.releasedAt;
      for (const r of all)
        expect(r).toMatchObject({ state: 'proceeded', generation: 1, late: false, proceededAt: releasedAt, release: { by: 'alice' } });
      const withAction = all.filter((r) => r.action?.type === 'enqueue');
      expect(withAction).toHaveLength(runs / 2);
      const messages = await messagesOf(name, runs / 2);
      // No run lost: every run with an action has its message, and the message its status names is one of them.
      expect([...messages.keys()].sort()).toEqual(withAction.map((r) => r.runId).sort());
      for (const r of withAction) expect(messages.get(r.runId)).toContain(r.action?.messageId);
      // None let go twice: one release, the counts exact.
      const gate = (await requestJson<GateView>(host, 'GET', `/api/gates/${name}`)).body;
      expect(gate).toMatchObject({ state: 'released', releasedAt, waiters: { waiting: 0, registered: runs, late: 0, proceeded: runs } });
      const audit = await readAll<{ kind: string }>(host, `/api/gates/${name}/audit`, { key: 'admin' });
      expect(audit.filter((r) => r.kind === 'release')).toHaveLength(1);
      // At least once: a batch cut off between its messages and their record sends those again.
      const repeats = [...messages.values()].reduce((n, m) => n + m.length - 1, 0);
      expect(repeats).toBeLessThanOrEqual(runs / 2);
    },
    400_000,
  );
});

describeDevhost('gates on the virtual clock', () => {
  let host: E2eHost;
  beforeAll(async () => {
    // Only the gate's own Durable timer should run while the clock moves by hours.
    host = await startE2eHost({ virtualClock: true, env: periodicTimersOff });
  });
  afterAll(async () => {
    await host.dispose();
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
