/**
 * Regression tests for the findings of issue #17 ("nobody gets more than their key allows") that the
 * authorization work fixed — a gated run leaking the admin key (finding 1), schedules escalating to
 * admin actions (2), operator actions at function level (9) — each named by the behaviour it proves,
 * on the host of the run (devhost or real host) with keys on. The matrix in authorization.test.ts
 * covers every route; these follow each attack through to what it would have won.
 */
import type { GateView } from '../../shared/gates/schemas';
import type { ScheduleView } from '../../shared/schedules/views';
import { type E2eHost, hostLabel } from './support/harness';
import { sharedE2eHost } from './support/sharedHost';
import { expectProblem, type JsonResponse, readableAnswer, requestJson } from './support/http';
import { unique } from './support/names';
import { readAll } from './support/pages';
import { until } from './support/wait';

const readable = (res: JsonResponse): string => readableAnswer(res.headers, res.body);

describe(`admin actions and keys a function key cannot reach (${hostLabel()}, keys on)`, () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await sharedE2eHost();
  });
  afterAll(async () => {
    await host.dispose();
  });

  const createGate = async (name: string): Promise<void> => {
    expect((await requestJson(host, 'PUT', `/api/gates/${name}`, { key: 'admin', body: {} })).status).toBe(201);
  };
  const gateState = async (name: string): Promise<GateView> => (await requestJson<GateView>(host, 'GET', `/api/gates/${name}`)).body;

  test('a gated run answers with its own status route, never Durable management URLs or a key', async () => {
    const gate = unique('f1');
    await createGate(gate);
    const started = await requestJson<Record<string, unknown>>(host, 'POST', `/api/gates/${gate}/runs`, {
      key: 'function',
      body: { runId: 'w1' },
    });
    expect(started.status).toBe(202);
    const text = readable(started);
    expect(text).not.toContain('code=');
    expect(text).not.toContain(host.keys.admin);
    expect(text).not.toMatch(/runtime\/webhooks|statusQueryGetUri|terminatePostUri|purgeHistoryDeleteUri/);
    expect(started.body).toEqual({ runId: 'w1', gate, created: true, id: `gate:${gate}:run:w1`, statusUri: `/api/gates/${gate}/runs/w1` });
    expect(started.headers.get('location')).toBe(`/api/gates/${gate}/runs/w1`);

    // The status route is what the run starter follows, with the same function key.
    const status = await until('the run to wait', async () => {
      const res = await requestJson<{ state: string }>(host, 'GET', `/api/gates/${gate}/runs/w1`);
      return res.body.state === 'waiting' ? res : undefined;
    });
    expect(status.status).toBe(200);
    expect(readable(status)).not.toContain('code=');
    expect(status.body).toMatchObject({ runId: 'w1', gate, state: 'waiting', generation: 1, proceededAt: null });
    expectProblem(await requestJson(host, 'GET', `/api/gates/${gate}/runs/nope`), 404, 'NotFound');

    // What the leaked key won before: the Durable management API and the admin release. A function key reaches neither.
    const hook = `/runtime/webhooks/durabletask/instances/${encodeURIComponent(`gate:${gate}:run:w1`)}`;
    // A key the host knows without the level is 403 on system routes, as the real host answers (devhost/docs/real-host.md#keys).
    expect((await requestJson(host, 'POST', `${hook}/terminate?reason=x`, { key: 'function' })).status).toBe(403);
    expect((await requestJson(host, 'POST', `/api/gates/${gate}/release`, { key: 'function', body: {} })).status).toBe(401);
    expect(await gateState(gate)).toMatchObject({ state: 'closed', releasedBy: null });
  });

  test('a gateRelease target needs the admin key to create, trigger or change; the creator is recorded', async () => {
    const gate = unique('f2');
    await createGate(gate);
    const id = unique('f2s');
    const definition = { id, at: '2099-01-01T00:00:00Z', target: { type: 'gateRelease', gate }, by: 'mallory' };

    // The function-level route refuses the admin target, and nothing is created.
    const refused = expectProblem(
      await requestJson(host, 'POST', '/api/schedules', { key: 'function', body: definition }),
      403,
      'Forbidden',
    );
    expect(refused.issues).toEqual([{ path: 'body.target.type', message: expect.stringContaining('/api/schedules/privileged') }]);
    expectProblem(await requestJson(host, 'GET', `/api/schedules/${id}`), 404, 'NotFound');
    // The admin-level route does not take a function key.
    expect((await requestJson(host, 'POST', '/api/schedules/privileged', { key: 'function', body: definition })).status).toBe(401);
    expectProblem(await requestJson(host, 'GET', `/api/schedules/${id}`), 404, 'NotFound');

    const created = await requestJson<ScheduleView>(host, 'POST', '/api/schedules/privileged', {
      key: 'admin',
      body: { ...definition, by: 'ops' },
    });
    expect(created.status).toBe(201);
    expect(created.body.createdBy).toEqual({ by: 'ops', level: 'admin', owner: 'admin:master-key' });

    // Triggering or changing it needs the admin key too.
    for (const [method, path] of [
      ['POST', `/api/schedules/${id}/trigger`],
      ['POST', `/api/schedules/${id}/pause`],
      ['POST', `/api/schedules/${id}/resume`],
      ['DELETE', `/api/schedules/${id}`],
    ] as const) {
      expect({ method, path, status: (await requestJson(host, method, path, { key: 'function' })).status }).toEqual({
        method,
        path,
        status: 401,
      });
    }
    expect(await gateState(gate)).toMatchObject({ state: 'closed' });

    // An admin's trigger runs it; the gate's audit names the schedule and who created it with which key.
    expect((await requestJson(host, 'POST', `/api/schedules/${id}/trigger`, { key: 'admin' })).status).toBe(202);
    await until('the scheduled release', async () => ((await gateState(gate)).state === 'released' ? true : undefined));
    // The audit row is written with the release (shared/gates/service.ts), which the schedule's run makes.
    const released = await until('the release in the gate audit', async () => {
      const audit = await readAll<{ kind: string; by: string; note?: string }>(host, `/api/gates/${gate}/audit`, { key: 'admin' });
      return audit.find((r) => r.kind === 'release');
    });
    expect(released).toMatchObject({
      by: `schedule:${id}`,
      note: expect.stringContaining('schedule created by "ops" with the admin key'),
    });

    // A schedule a function-key holder may create says so.
    const own = await requestJson<ScheduleView>(host, 'POST', '/api/schedules', {
      key: 'function',
      body: { at: '2099-01-01T00:00:00Z', target: { type: 'queueMessage', queue: unique('app-f2q'), message: 1 }, by: 'shop' },
    });
    expect(own.status).toBe(201);
    expect(own.body.createdBy).toEqual({ by: 'shop', level: 'function', owner: 'key:shared' });
  });

  test('listing schedules and retrying failed job items need the admin key', async () => {
    const list = await requestJson(host, 'GET', '/api/schedules', { key: 'function' });
    expect(list.status).toBe(401);
    expect((await requestJson(host, 'GET', '/api/schedules', { key: 'admin' })).status).toBe(200);
    const job = unique('f9');
    expect((await requestJson(host, 'POST', `/api/jobs/${job}/retry-failed`, { key: 'function' })).status).toBe(401);
    // Past the host, the handler answers (there is no such job).
    expectProblem(await requestJson(host, 'POST', `/api/jobs/${job}/retry-failed`, { key: 'admin' }), 404, 'NotFound');
  });
});
