/**
 * The long-running-operation convention on the wire (docs/http-api.md#long-running-operations), on
 * the host of the run: every route that answers 202 sends Location and Retry-After and names the same
 * status route as `statusUri`, and that route answers the operation's state; gate create, release
 * and reset answer 200/201, never 202 (their change is written before they answer).
 */
import type { E2eHost } from './support/harness';
import { type JsonResponse, requestJson } from './support/http';
import { unique } from './support/names';
import { sharedE2eHost } from './support/sharedHost';
import { until } from './support/wait';

// On the project's shared host (test/e2e/support/sharedHost.ts): every test names what it makes with
// unique(…), and none needs a setting of its own. (It had a host of its own with a 200 ms stream flush
// interval, a host start that changed no answer: an append's 202 says Retry-After 1 whatever the
// interval, shared/streams/writeRoutes.ts.)
describe('202 Accepted: Location, Retry-After and statusUri', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await sharedE2eHost();
  });

  /** Checks the convention on a 202 and returns the status route's answer. */
  async function followAccepted(answer: JsonResponse, retryAfter: number, key: 'function' | 'admin' = 'function'): Promise<JsonResponse> {
    expect(answer.status).toBe(202);
    const statusUri = (answer.body as { statusUri?: unknown }).statusUri;
    expect(typeof statusUri).toBe('string');
    expect(answer.headers.get('location')).toBe(statusUri);
    expect(answer.headers.get('retry-after')).toBe(String(retryAfter));
    const status = await requestJson(host, 'GET', statusUri as string, { key });
    expect(status.status).toBe(200);
    return status;
  }

  test('gate create, release and reset answer once the change is written: 201/200, never 202', async () => {
    const name = unique('lro-gate');
    const admin = { key: 'admin' as const, body: {} };
    const statuses = [
      (await requestJson(host, 'PUT', `/api/gates/${name}`, admin)).status,
      (await requestJson(host, 'PUT', `/api/gates/${name}`, admin)).status,
      (await requestJson(host, 'POST', `/api/gates/${name}/release`, admin)).status,
      (await requestJson(host, 'POST', `/api/gates/${name}/release`, admin)).status,
      (await requestJson(host, 'POST', `/api/gates/${name}/reset`, admin)).status,
    ];
    expect(statuses).toEqual([201, 200, 200, 200, 200]);
  });

  test('a gated run: its status route answers waiting, then proceeded after the release', async () => {
    const name = unique('lro-run');
    expect((await requestJson(host, 'PUT', `/api/gates/${name}`, { key: 'admin', body: {} })).status).toBe(201);
    const started = await requestJson(host, 'POST', `/api/gates/${name}/runs`, { body: { runId: 'w1' } });
    expect((started.body as { statusUri: string }).statusUri).toBe(`/api/gates/${name}/runs/w1`);
    expect((await followAccepted(started, 10)).body).toMatchObject({ runId: 'w1', state: 'waiting' });
    expect((await requestJson(host, 'POST', `/api/gates/${name}/release`, { key: 'admin', body: {} })).status).toBe(200);
    const after = await requestJson(host, 'GET', `/api/gates/${name}/runs/w1`);
    expect(after.body).toMatchObject({ state: 'proceeded', action: { type: 'none' } });
  });

  test('a job submission and a retry of its failed items point at the job', async () => {
    const submitted = await requestJson(host, 'POST', '/api/jobs', {
      body: { processor: 'wordcount', items: [{ id: 'a', text: 'one two' }, { id: 'b' }] },
    });
    const job = (await followAccepted(submitted, 2)).body as { id: string };
    expect((submitted.body as { statusUri: string }).statusUri).toBe(`/api/jobs/${job.id}`);
    await until('the job to complete', async () => {
      const read = await requestJson<{ state: string }>(host, 'GET', `/api/jobs/${job.id}`);
      return read.body.state === 'completedWithFailures' ? read : undefined;
    });
    const retried = await requestJson(host, 'POST', `/api/jobs/${job.id}/retry-failed`, { key: 'admin' });
    expect((await followAccepted(retried, 2, 'admin')).body).toMatchObject({ id: job.id });
  });

  test('a schedule trigger points at the schedule, whose runs show the trigger', async () => {
    const id = unique('lro-schedule');
    const at = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const target = { type: 'queueMessage', queue: unique('app-lro'), message: 'now' };
    expect((await requestJson(host, 'POST', '/api/schedules', { body: { id, at, target } })).status).toBe(201);
    const triggered = await requestJson<{ triggerId: string; statusUri: string }>(host, 'POST', `/api/schedules/${id}/trigger`, {
      key: 'admin',
    });
    expect(triggered.body.statusUri).toBe(`/api/schedules/${id}/privileged`);
    await followAccepted(triggered, 2, 'admin');
    await until('the triggered run', async () => {
      const read = await requestJson<{ runs: { triggerId?: string; outcome?: string }[] }>(host, 'GET', triggered.body.statusUri, {
        key: 'admin',
      });
      return read.body.runs.some((r) => r.triggerId === triggered.body.triggerId && r.outcome === 'succeeded') ? read : undefined;
    });
  });

  test('a buffered stream append points at the stream; a counter increment at the counter', async () => {
    const type = unique('lro-stream');
    const appended = await requestJson(host, 'POST', `/api/streams/${type}/events`, { body: { producer: 'p', seq: 1 } });
    expect((appended.body as { statusUri: string }).statusUri).toBe(`/api/streams/${type}`);
    expect((await followAccepted(appended, 1)).body).toMatchObject({ type });

    const counter = unique('lro-counter');
    expect((await requestJson(host, 'PUT', `/api/counters/${counter}`, { key: 'admin', body: {} })).status).toBe(201);
    const incremented = await requestJson(host, 'POST', `/api/counters/${counter}/increment`, { body: { by: 2 } });
    expect((await followAccepted(incremented, 1)).body).toMatchObject({ name: counter, value: 2 });
  });
});
