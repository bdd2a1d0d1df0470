/**
 * The Durable HTTP API and client binding over real HTTP, against a devhost child process running
 * the fixture app (e2e harness): raw webhook calls with the status codes and payload shapes the
 * extension answers with, the real DurableClient from `df.getClient` inside a client function,
 * check-status links that work on any port, keys on the webhook routes, the virtual clock, and a
 * restart that resumes a pending timer and entity state (table store on Azurite).
 */
import { join } from 'node:path';

import { type E2eHost, startDevhost } from '../../../test/e2e/support/harness';

const appRoot = join(__dirname, 'fixtures', 'durable-app');
const hook = '/runtime/webhooks/durabletask';

interface Status {
  runtimeStatus: string;
  output: unknown;
  input: unknown;
  instanceId: string;
  name: string;
  createdTime: string;
  lastUpdatedTime: string;
  customStatus: unknown;
}

/**
 * The client binding's links are built from WEBSITE_HOSTNAME, which the devhost sets to
 * localhost:<port> as func start does (hostname.test.ts); the HTTP API's own answers, and
 * createCheckStatusResponse, follow the request's origin.
 */
function linkOrigin(host: E2eHost): string {
  return `http://localhost:${new URL(host.baseUrl).port}`;
}

async function json<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

async function waitForStatus(host: E2eHost, id: string, wanted: string): Promise<Status> {
  let last: Status | undefined;
  for (let i = 0; i < 300; i++) {
    const res = await fetch(host.url(`${hook}/instances/${id}`));
    if (res.status === 200 || res.status === 202) {
      last = await json<Status>(res);
      if (last.runtimeStatus === wanted) return last;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const history = await (await fetch(host.url(`${hook}/instances/${id}?showHistory=true&showHistoryOutput=true`))).text();
  throw new Error(`${id} did not reach ${wanted} (last: ${JSON.stringify(last)})\nhistory: ${history}\n${host.output()}`);
}

describe('Durable HTTP API on the devhost', () => {
  let host: E2eHost;
  beforeAll(async () => {
    host = await startDevhost({ appRoot, virtualClock: true });
  });
  afterAll(async () => {
    await host.stop();
  });

  test('start, status 202 while running and 200 when done, 404 for an unknown instance', async () => {
    const started = await fetch(host.url(`${hook}/orchestrators/waiter/http-1`), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(started.status).toBe(202);
    const links = await json<Record<string, string>>(started);
    expect(Object.keys(links).sort()).toEqual([
      'id',
      'purgeHistoryDeleteUri',
      'restartPostUri',
      'resumePostUri',
      'sendEventPostUri',
      'statusQueryGetUri',
      'suspendPostUri',
      'terminatePostUri',
    ]);
    expect(links.id).toBe('http-1');
    expect(started.headers.get('location')).toBe(links.statusQueryGetUri);
    expect(started.headers.get('retry-after')).toBe('10');
    expect(links.statusQueryGetUri).toMatch(
      new RegExp(`^${host.baseUrl}${hook}/instances/http-1\\?taskHub=${host.taskHub}&connection=Storage&code=[A-Za-z0-9_-]+$`),
    );

    await waitForStatus(host, 'http-1', 'Running');
    const running = await fetch(links.statusQueryGetUri as string);
    expect(running.status).toBe(202);
    expect(running.headers.get('retry-after')).toBe('5');
    expect(await json<Status>(running)).toMatchObject({
      name: 'waiter',
      instanceId: 'http-1',
      runtimeStatus: 'Running',
      input: { a: 1 },
      customStatus: { stage: 'waiting' },
      output: null,
    });

    const duplicate = await fetch(host.url(`${hook}/orchestrators/waiter/http-1`), { method: 'POST' });
    expect(duplicate.status).toBe(409);

    const raise = await fetch((links.sendEventPostUri as string).replace('{eventName}', 'finish'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '"done"',
    });
    expect(raise.status).toBe(202);
    const done = await waitForStatus(host, 'http-1', 'Completed');
    expect(done.output).toBe('done');
    expect(done.createdTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect((await fetch(links.statusQueryGetUri as string)).status).toBe(200);
    expect((await fetch(host.url(`${hook}/instances/nobody`))).status).toBe(404);

    const late = await fetch((links.sendEventPostUri as string).replace('{eventName}', 'finish'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '1',
    });
    expect(late.status).toBe(410);
    expect((await fetch((links.terminatePostUri as string).replace('{text}', 'x'), { method: 'POST' })).status).toBe(410);
  });

  test('start-and-wait answers 200 with the output; restart starts the same orchestration again', async () => {
    const res = await fetch(host.url(`${hook}/orchestrators/sequence/waited?timeout=20&pollingInterval=1`), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '["Rome"]',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(['Hello Rome']);
    const restarted = await fetch(host.url(`${hook}/instances/waited/restart`), { method: 'POST' });
    expect(restarted.status).toBe(202);
    const { id } = await json<{ id: string }>(restarted);
    expect(id).not.toBe('waited');
    expect((await waitForStatus(host, id, 'Completed')).output).toEqual(['Hello Rome']);
    expect((await fetch(host.url(`${hook}/instances/waited/rewind`), { method: 'POST' })).status).toBe(501);
  });

  test('raise event needs JSON; terminate, suspend and resume answer 202; purge 200/404/412', async () => {
    await fetch(host.url(`${hook}/orchestrators/waiter/http-2`), { method: 'POST' });
    await waitForStatus(host, 'http-2', 'Running');
    const base = host.url(`${hook}/instances/http-2`);
    expect(
      (await fetch(`${base}/raiseEvent/finish`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '1' })).status,
    ).toBe(400);
    const bad = await fetch(`${base}/raiseEvent/finish`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{nope',
    });
    expect(bad.status).toBe(400);
    expect(await json<{ Message: string }>(bad)).toEqual({ Message: expect.stringContaining('Invalid JSON') });
    expect((await fetch(`${base}/suspend?reason=wait`, { method: 'POST' })).status).toBe(202);
    await waitForStatus(host, 'http-2', 'Suspended');
    expect((await fetch(`${base}/resume?reason=go`, { method: 'POST' })).status).toBe(202);
    await waitForStatus(host, 'http-2', 'Running');
    expect((await fetch(base, { method: 'DELETE' })).status).toBe(412);
    expect((await fetch(`${base}/terminate?reason=stop`, { method: 'POST' })).status).toBe(202);
    expect((await waitForStatus(host, 'http-2', 'Terminated')).output).toBe('stop');
    expect(await json(await fetch(base, { method: 'DELETE' }))).toEqual({ instancesDeleted: 1 });
    expect((await fetch(base, { method: 'DELETE' })).status).toBe(404);
    expect((await fetch(`${base}/terminate`, { method: 'POST' })).status).toBe(404);
  });

  test('list with filters and continuation; purge by filter', async () => {
    for (let i = 0; i < 3; i++) {
      await fetch(host.url(`${hook}/orchestrators/sequence/listed-${i}`), { method: 'POST' });
      await waitForStatus(host, `listed-${i}`, 'Completed');
    }
    const first = await fetch(host.url(`${hook}/instances/?instanceIdPrefix=listed-&top=2`));
    expect(first.status).toBe(200);
    const token = first.headers.get('x-ms-continuation-token');
    expect(token).toBeTruthy();
    const second = await fetch(host.url(`${hook}/instances/?instanceIdPrefix=listed-&top=2`), {
      headers: { 'x-ms-continuation-token': token as string },
    });
    const ids = [...(await json<Status[]>(first)), ...(await json<Status[]>(second))].map((s) => s.instanceId);
    expect(ids).toEqual(['listed-0', 'listed-1', 'listed-2']);
    expect(second.headers.get('x-ms-continuation-token')).toBeNull();
    expect((await fetch(host.url(`${hook}/instances/`), { method: 'DELETE' })).status).toBe(400);
    const purged = await fetch(host.url(`${hook}/instances/?createdTimeFrom=2000-01-01T00:00:00Z&runtimeStatus=Completed`), {
      method: 'DELETE',
    });
    expect(await json<{ instancesDeleted: number }>(purged)).toEqual({ instancesDeleted: expect.any(Number) });
    expect((await fetch(host.url(`${hook}/instances/listed-0`))).status).toBe(404);
  });

  test('signal, read and list entities; unknown entity functions are refused', async () => {
    const entity = host.url(`${hook}/entities/counter/web`);
    expect((await fetch(entity)).status).toBe(404);
    expect((await fetch(`${entity}?op=add`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '5' })).status).toBe(
      202,
    );
    expect((await fetch(`${entity}?op=add`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '6' })).status).toBe(
      202,
    );
    let state: unknown;
    for (let i = 0; i < 100 && state !== 11; i++) {
      const res = await fetch(entity);
      state = res.status === 200 ? await res.json() : undefined;
      if (state !== 11) await new Promise((r) => setTimeout(r, 20));
    }
    expect(state).toBe(11);
    const list = await json<{ entityId: { name: string; key: string }; state?: unknown }[]>(
      await fetch(host.url(`${hook}/entities/counter?fetchState=true`)),
    );
    expect(list).toContainEqual(expect.objectContaining({ entityId: { name: 'counter', key: 'web' }, state: 11 }));
    expect((await fetch(host.url(`${hook}/entities/nosuch/x?op=add`), { method: 'POST' })).status).toBe(400);
  });

  test("the real DurableClient inside a client function sees the extension's answers", async () => {
    const res = await fetch(host.url('/api/tour/tour-1'), { method: 'POST' });
    expect(res.status).toBe(200);
    const seen = await json<Record<string, unknown>>(res);
    expect(seen.running).toMatchObject({ instanceId: 'tour-1', name: 'waiter', runtimeStatus: 'Running', input: { hello: 'world' } });
    expect(seen.duplicate).toMatch(/unexpected status code: 409/);
    expect(seen.finished).toMatchObject({ runtimeStatus: 'Completed', output: { done: true } });
    // The extension sends `historyEvents`; durable-functions reads `history`: the real quirk is kept.
    expect((seen.finished as Record<string, unknown>).history).toBeUndefined();
    expect(seen.all).toContain('tour-1');
    expect(seen.byStatus).toContain('tour-1');
    expect(seen.missing).toMatch(/HTTP 404/);
    expect(seen.raiseAfterFinish).toBe('ok');
    expect(seen.entity).toEqual({ entityExists: true, entityState: 7 });
    expect(seen.missingEntity).toEqual({ entityExists: false });
    expect(seen.purged).toEqual({ instancesDeleted: 1 });
    expect(seen.purgedAgain).toEqual({ instancesDeleted: 0 });
    expect((seen.payload as Record<string, string>).statusQueryGetUri).toEqual(
      expect.stringMatching(
        new RegExp(`^${linkOrigin(host)}${hook}/instances/tour-1\\?taskHub=${host.taskHub}&connection=Storage&code=[A-Za-z0-9_-]+$`),
      ),
    );
  });

  test('an activity with a durable client input reaches another instance', async () => {
    await fetch(host.url(`${hook}/orchestrators/waiter/relayed`), { method: 'POST' });
    await waitForStatus(host, 'relayed', 'Running');
    await fetch(host.url(`${hook}/orchestrators/relay/relayer`), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'relayed', value: 'via-activity' }),
    });
    expect((await waitForStatus(host, 'relayer', 'Completed')).output).toBe('relayed');
    expect((await waitForStatus(host, 'relayed', 'Completed')).output).toBe('via-activity');
  });

  test('createCheckStatusResponse links point at this devhost and work; timers wait for the virtual clock', async () => {
    const res = await fetch(host.url('/api/start/sleeper/nap-1'), { method: 'POST', body: '3600' });
    expect(res.status).toBe(202);
    const links = await json<Record<string, string>>(res);
    expect(res.headers.get('location')).toBe(links.statusQueryGetUri);
    // createCheckStatusResponse puts the request's origin in place of the binding's.
    expect(links.statusQueryGetUri?.startsWith(`${host.baseUrl}${hook}/instances/nap-1?`)).toBe(true);
    await waitForStatus(host, 'nap-1', 'Running');
    await host.advanceClock(3_600_000);
    const done = await fetch(links.statusQueryGetUri as string);
    expect(done.status).toBe(200);
    expect(await json<Status>(done)).toMatchObject({ runtimeStatus: 'Completed', output: 'woke' });
  });
});

describe('real host (real-host.md#durable-links): Durable management URLs', () => {
  test('management URLs carry connection=Storage&code=<the durabletask_extension system key>, not the master key', async () => {
    const host = await startDevhost({ appRoot, virtualClock: true });
    try {
      const res = await fetch(host.url('/api/start/sleeper/links-1'), { method: 'POST', body: '600' });
      expect(res.status).toBe(202);
      const links = await json<Record<string, string>>(res);
      const status = new URL(links.statusQueryGetUri as string);
      expect(status.pathname).toBe(`${hook}/instances/links-1`);
      expect([...status.searchParams.keys()]).toEqual(['taskHub', 'connection', 'code']);
      expect(status.searchParams.get('taskHub')).toBe(host.taskHub);
      expect(status.searchParams.get('connection')).toBe('Storage');
      const code = status.searchParams.get('code') as string;
      expect(code).toMatch(/^[A-Za-z0-9_-]{40,}$/);
      expect(code).not.toBe(host.keys.admin);
      expect(new URL(links.terminatePostUri as string).searchParams.get('code')).toBe(code);
      // The system key opens the Durable webhooks; it is no master key: the admin API refuses it with
      // 403, as the real host does for a key it knows that lacks the level (devhost/docs/real-host.md#keys).
      expect((await fetch(status)).status).toBe(202);
      expect((await fetch(host.url(`/admin/host/status?code=${encodeURIComponent(code)}`))).status).toBe(403);
    } finally {
      await host.stop();
    }
  });
});

describe('the devhost with keys and restarts', () => {
  test('webhook routes need the system or admin key; the client function still works; a restart resumes a timer and entity state', async () => {
    const host = await startDevhost({ appRoot, virtualClock: true, keys: { admin: 'admin-secret', function: 'fn-secret' } });
    try {
      expect((await fetch(host.url(`${hook}/instances/x`))).status).toBe(401);
      expect((await fetch(host.url(`${hook}/instances/x?code=not-a-key`))).status).toBe(401);
      // A key the host knows without the level: 403, as on the real host (devhost/docs/real-host.md#keys).
      expect((await fetch(host.url(`${hook}/instances/x?code=fn-secret`))).status).toBe(403);
      expect((await fetch(host.url(`${hook}/instances/x?code=admin-secret`))).status).toBe(404);
      const res = await fetch(host.url('/api/start/sleeper/after-restart?code=fn-secret'), { method: 'POST', body: '600' });
      expect(res.status).toBe(202);
      const links = await json<Record<string, string>>(res);
      // The links carry the extension's system key, not the master key (devhost/docs/real-host.md#durable-links).
      const code = new URL(links.statusQueryGetUri as string).searchParams.get('code');
      expect(code).toEqual(expect.any(String));
      expect(code).not.toBe('admin-secret');
      const signal = await fetch(host.url(`${hook}/entities/counter/kept?op=add&code=admin-secret`), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '42',
      });
      expect(signal.status).toBe(202);
      const withKey = async (url: string): Promise<Response> =>
        fetch(url.includes('?') ? `${url}&code=admin-secret` : `${url}?code=admin-secret`);
      for (let i = 0; i < 100; i++) {
        const status = await json<Status>(await fetch(links.statusQueryGetUri as string));
        if (status.runtimeStatus === 'Running' && (await withKey(host.url(`${hook}/entities/counter/kept`))).status === 200) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await host.restart();
      expect(await json(await withKey(host.url(`${hook}/entities/counter/kept`)))).toBe(42);
      expect((await json<Status>(await fetch(links.statusQueryGetUri as string))).runtimeStatus).toBe('Running');
      await host.advanceClock(601_000);
      expect(await json<Status>(await fetch(links.statusQueryGetUri as string))).toMatchObject({
        runtimeStatus: 'Completed',
        output: 'woke',
      });
    } finally {
      await host.stop();
    }
  });
});

describe('the worker-facing Durable API is on its own listener, not the public port (real-host.md#durable-rpc)', () => {
  let host: E2eHost;
  const withAdmin = (path: string): string => host.url(`${path}${path.includes('?') ? '&' : '?'}code=admin-secret`);

  beforeAll(async () => {
    host = await startDevhost({ appRoot, virtualClock: true, keys: { admin: 'admin-secret', function: 'fn-secret' } });
  });
  afterAll(async () => {
    await host.stop();
  });

  test('with keys on and no key, POST /durabletask/instances/<id>/raiseEvent/X on the public port is 404 and the instance is unaffected', async () => {
    // The worker's client starts the instance through its own listener (rpcBaseUrl), with the function key on the public route.
    expect((await fetch(host.url('/api/start/waiter/rpc-raise?code=fn-secret'), { method: 'POST' })).status).toBe(202);
    let status: Status | undefined;
    for (let i = 0; i < 200 && status?.runtimeStatus !== 'Running'; i++) {
      const res = await fetch(withAdmin(`${hook}/instances/rpc-raise`));
      if (res.status === 202) status = await json<Status>(res);
      else await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toMatchObject({ runtimeStatus: 'Running', customStatus: { stage: 'waiting' } });

    for (const code of ['', '?code=fn-secret', '?code=admin-secret']) {
      const raised = await fetch(host.url(`/durabletask/instances/rpc-raise/raiseEvent/finish${code}`), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '"forged"',
      });
      expect({ code, status: raised.status, body: await raised.text() }).toEqual({ code, status: 404, body: '' });
    }
    // Whatever a forged event would have started has run by now (the clock moves only once the host settles).
    await host.advanceClock(0);
    expect(await json<Status>(await fetch(withAdmin(`${hook}/instances/rpc-raise`)))).toMatchObject({
      runtimeStatus: 'Running',
      customStatus: { stage: 'waiting' },
      output: null,
    });
  });

  test('GET /durabletask/instances/<id> on the public port is 404, with no key and with any key', async () => {
    for (const code of ['', '?code=fn-secret', '?code=admin-secret']) {
      const res = await fetch(host.url(`/durabletask/instances/rpc-raise${code}`));
      expect({ code, status: res.status, body: await res.text() }).toEqual({ code, status: 404, body: '' });
    }
    expect((await fetch(host.url('/durabletask/instances?code=admin-secret'))).status).toBe(404);
  });
});
