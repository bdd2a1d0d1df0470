/**
 * Parity with the real Functions host: one test per behaviour observed on host 4.1037.0 (Node worker
 * 3.9.1, Durable extension 3.19.0), each named after it and grouped by the section of
 * devhost/docs/real-host.md that records it, with its sources.
 */
import { request as httpRequest } from 'node:http';

import { type RunningHost, startHost } from '../host';
import { fixture, startFixture } from './support';

interface Seen {
  params: Record<string, string>;
  body: string;
}

describe('real host (real-host.md#binding-data): request.params in stream mode is the binding data', () => {
  let host: RunningHost;
  const url = (path: string): string => `${host.baseUrl}${path}`;
  const seen = async (path: string, init: RequestInit = {}): Promise<Seen> => {
    const res = await fetch(url(path), init);
    expect(res.status).toBe(200);
    return (await res.json()) as Seen;
  };

  beforeAll(async () => {
    host = await startFixture('stream');
  });
  afterAll(async () => {
    await host.stop();
  });

  test('route values, then every query value except code, then top-level primitive JSON body fields', async () => {
    const body = JSON.stringify({ producer: 'p-1', seq: 3, ok: true, ratio: 2.5, nested: { a: 1 }, list: [1], none: null });
    const s = await seen('/api/params/orders?limit=500&ack=flushed&code=secret', { method: 'POST', body });
    // Objects, arrays and nulls are left out; booleans read as .NET writes them (`True`).
    expect(s.params).toEqual({ type: 'orders', limit: '500', ack: 'flushed', producer: 'p-1', seq: '3', ok: 'True', ratio: '2.5' });
    expect(s.body).toBe(body);
  });

  test('name clash: the route value wins over the query, the query over the body', async () => {
    const body = JSON.stringify({ type: 'from-body', seq: 1, only: 'body' });
    const s = await seen('/api/params/orders?type=from-query&seq=9', { method: 'POST', body });
    expect(s.params).toEqual({ type: 'orders', seq: '9', only: 'body' });
  });

  test('names are matched without regard to case and keep their first spelling', async () => {
    const s = await seen('/api/params/orders?TYPE=from-query');
    expect(s.params).toEqual({ TYPE: 'orders' });
  });

  test('a body that is not a JSON object, or comes without a Content-Length, adds nothing', async () => {
    expect((await seen('/api/params/orders', { method: 'POST', body: '[{"a":1}]' })).params).toEqual({ type: 'orders' });
    expect((await seen('/api/params/orders', { method: 'POST', body: 'a=1' })).params).toEqual({ type: 'orders' });
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"seq":1}'));
        controller.close();
      },
    });
    const s = await seen('/api/params/orders', { method: 'POST', body: chunked, duplex: 'half' });
    expect(s).toEqual({ params: { type: 'orders' }, body: '{"seq":1}' });
  });
});

describe('real host (real-host.md#routing, #paths, #keys): routing and keys', () => {
  let host: RunningHost;
  const url = (path: string): string => `${host.baseUrl}${path}`;

  beforeAll(async () => {
    host = await startFixture('stream');
  });
  afterAll(async () => {
    await host.stop();
  });

  test('a wrong HTTP method on a route answers 404, not 405', async () => {
    const res = await fetch(url('/api/upload/report'));
    expect(res.status).toBe(404);
    expect(res.headers.get('allow')).toBeNull();
  });

  test('/admin needs the master key even when function keys are not checked', async () => {
    expect((await fetch(url('/api/guarded'))).status).toBe(200);
    expect((await fetch(url('/admin/functions'))).status).toBe(401);
    expect((await fetch(url('/admin/host/status?code=wrong'))).status).toBe(401);
    expect((await fetch(url(`/admin/host/status?code=${encodeURIComponent(host.masterKey)}`))).status).toBe(200);
    expect((await fetch(url('/admin/functions'), { headers: { 'x-functions-key': host.masterKey } })).status).toBe(200);
  });

  test('a path segment that is not valid UTF-8 reaches the function as sent (Kestrel leaves it encoded)', async () => {
    const res = await fetch(url('/api/params/%FF%FE'));
    expect(res.status).toBe(200);
    expect(((await res.json()) as Seen).params).toEqual({ type: '%FF%FE' });
  });
});

describe('real host (real-host.md#paths): a request target that starts with // names no host', () => {
  let host: RunningHost;
  const invoked: string[] = [];
  const get = (path: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      // node:http sends the target exactly as given (a URL parser would read `evil.example` as the host).
      httpRequest({ host: '127.0.0.1', port: host.port, path }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
        .on('error', reject)
        .end();
    });

  beforeAll(async () => {
    host = await startFixture('stream', {
      quiet: false,
      log: (_level, message) => {
        const m = /^Executing 'Functions\.(\w+)'/.exec(message);
        if (m !== null) invoked.push(m[1] as string);
      },
    });
  });
  afterAll(async () => {
    await host.stop();
  });

  test("//evil.example/api/plain, //api/plain and /api//plain are the host's empty 404, and no function runs", async () => {
    for (const path of ['//evil.example/api/plain', '//api/plain', '//evil.example/admin/functions', '//', '/api//plain']) {
      expect({ path, ...(await get(path)) }).toEqual({ path, status: 404, body: '' });
    }
    expect(invoked).toEqual([]);
    // The same route without the leading slash is served (the check is on the target, not the route).
    expect(await get('/api/plain')).toEqual({ status: 200, body: 'plain' });
    expect(invoked).toEqual(['plain']);
  });
});

describe('real host (real-host.md#keys): keys when configured', () => {
  let host: RunningHost;
  const url = (path: string): string => `${host.baseUrl}${path}`;

  beforeAll(async () => {
    host = await startFixture('stream', { env: { FUNCTIONS_KEY: 'fk', FUNCTIONS_ADMIN_KEY: 'mk' } });
  });
  afterAll(async () => {
    await host.stop();
  });

  test('no key → 401 on function routes; ?code= works as well as the header', async () => {
    expect((await fetch(url('/api/guarded'))).status).toBe(401);
    expect((await fetch(url('/api/guarded?code=fk'))).status).toBe(200);
    expect((await fetch(url('/api/guarded'), { headers: { 'x-functions-key': 'mk' } })).status).toBe(200);
  });

  test('the admin API: a key the host knows without the level is 403; no key or an unknown key 401; the master key opens it', async () => {
    expect((await fetch(url('/admin/functions'))).status).toBe(401);
    expect((await fetch(url('/admin/functions?code=not-a-key'))).status).toBe(401);
    expect((await fetch(url('/admin/functions?code=fk'))).status).toBe(403);
    expect((await fetch(url('/admin/host/status'), { headers: { 'x-functions-key': 'fk' } })).status).toBe(403);
    expect((await fetch(url('/ADMIN/functions?code=fk'))).status).toBe(403);
    expect((await fetch(url('/admin/functions?code=mk'))).status).toBe(200);
  });

  test('an admin-level function route refuses the function key with 401, not 403 (function routes check keys themselves)', async () => {
    expect((await fetch(url('/api/privileged?code=fk'))).status).toBe(401);
    expect((await fetch(url('/api/privileged?code=not-a-key'))).status).toBe(401);
    expect((await fetch(url('/api/privileged?code=mk'))).status).toBe(200);
  });
});

describe('real host (real-host.md#which-key-counts): the key the host picks', () => {
  let host: RunningHost;
  /** Sends the target and headers exactly as given: a header named twice goes twice. */
  const status = (path: string, headers: readonly string[] = []): Promise<number> =>
    new Promise((resolve, reject) => {
      httpRequest({ host: '127.0.0.1', port: host.port, path, headers: ['Host', `127.0.0.1:${host.port}`, ...headers] }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });

  beforeAll(async () => {
    host = await startFixture('stream', { env: { FUNCTIONS_KEY: 'fk', FUNCTIONS_ADMIN_KEY: 'mk' } });
  });
  afterAll(async () => {
    await host.stop();
  });

  test('a present x-functions-key header wins even when empty: an empty or junk header with a good ?code= is 401', async () => {
    expect(await status('/api/guarded?code=fk', ['x-functions-key', ''])).toBe(401);
    expect(await status('/api/guarded?code=fk', ['x-functions-key', 'junk'])).toBe(401);
    expect(await status('/api/guarded?code=junk', ['x-functions-key', 'fk'])).toBe(200);
    expect(await status('/api/guarded?code=')).toBe(401);
  });

  test('code is matched in any letter case and after decoding; of several, the first value counts', async () => {
    for (const query of ['code=fk', 'CODE=fk', 'Code=fk', 'co%64e=fk', 'code=fk&code=junk', 'code=fk&CODE=junk']) {
      expect({ query, status: await status(`/api/guarded?${query}`) }).toEqual({ query, status: 200 });
    }
    for (const query of ['code=junk&code=fk', 'CODE=junk&code=fk', 'code=%20fk']) {
      expect({ query, status: await status(`/api/guarded?${query}`) }).toEqual({ query, status: 401 });
    }
  });

  test('with the header sent twice the first counts; one value is never split', async () => {
    expect(await status('/api/guarded', ['x-functions-key', 'fk', 'x-functions-key', 'junk'])).toBe(200);
    expect(await status('/api/guarded', ['x-functions-key', 'junk', 'x-functions-key', 'fk'])).toBe(401);
    expect(await status('/api/guarded', ['x-functions-key', '', 'x-functions-key', 'fk'])).toBe(401);
    expect(await status('/api/guarded', ['x-functions-key', 'fk, junk'])).toBe(401);
    expect(await status('/api/guarded', ['X-FUNCTIONS-KEY', 'fk'])).toBe(200);
  });

  test('the same rules open the admin API', async () => {
    expect(await status('/admin/host/status?code=mk', ['x-functions-key', ''])).toBe(401);
    expect(await status('/admin/host/status?CODE=mk')).toBe(200);
    expect(await status('/admin/host/status', ['x-functions-key', 'mk', 'x-functions-key', 'junk'])).toBe(200);
  });
});

describe('real host (real-host.md#paths, #routing): backslashes and unregistered methods', () => {
  let host: RunningHost;
  const send = (method: string, path: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      httpRequest({ host: '127.0.0.1', port: host.port, method, path }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
        .on('error', reject)
        .end();
    });

  beforeAll(async () => {
    host = await startFixture('stream');
  });
  afterAll(async () => {
    await host.stop();
  });

  test("a backslash is a path character, not a separator: /\\evil.example/api/plain and /api\\plain are the host's empty 404", async () => {
    for (const path of ['/\\evil.example/api/plain', '/\\evil.example', '/api\\plain', '/\\/api/plain']) {
      expect({ path, ...(await send('GET', path)) }).toEqual({ path, status: 404, body: '' });
    }
    expect(await send('GET', '/api/plain')).toEqual({ status: 200, body: 'plain' });
  });

  test('a method no function registers (TRACE, PROPFIND) is the empty 404', async () => {
    for (const method of ['TRACE', 'PROPFIND'])
      expect({ method, ...(await send(method, '/api/plain')) }).toEqual({ method, status: 404, body: '' });
  });
});

describe('requests during start-up', () => {
  test('a request that arrives before the host is ready is held and answered, not left hanging', async () => {
    // An extension that starts slowly: the port is open while it starts, the host is not ready yet.
    // (Before the fix such a request found no listener and hung: 5 of 628 in the reproduction.)
    let port = 0;
    const answered: number[] = [];
    const starting = startHost({
      appRoot: fixture('stream'),
      port: 0,
      quiet: true,
      log: () => undefined,
      env: { AzureWebJobsStorage: process.env.TEST_STORAGE_CONNECTION },
      extensions: [
        {
          name: 'slow',
          bindingTypes: [],
          start: async (services) => {
            port = Number(new URL(services.baseUrl).port);
            // The port is open now and the host is not ready: ask, and keep starting for a while.
            const pending = new Promise<number>((resolve, reject) => {
              httpRequest({ host: '127.0.0.1', port, path: '/api/plain' }, (res) => {
                res.resume();
                resolve(res.statusCode ?? 0);
              })
                .on('error', reject)
                .end();
            });
            void pending.then((status) => answered.push(status));
            await new Promise((r) => setTimeout(r, 300));
            expect(answered).toEqual([]);
          },
          stop: () => Promise.resolve(),
          idle: () => true,
        },
      ],
    });
    const host = await starting;
    try {
      for (let i = 0; i < 100 && answered.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(answered).toEqual([200]);
    } finally {
      await host.stop();
    }
  });
});
