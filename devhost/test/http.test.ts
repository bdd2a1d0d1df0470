import type { HostLogLevel } from '../log';
import type { RunningHost } from '../host';
import { startFixture } from './support';

describe('HTTP triggers (buffered mode, basic fixture)', () => {
  let host: RunningHost;
  const url = (path: string): string => `${host.baseUrl}${path}`;
  const logged: { level: HostLogLevel; message: string }[] = [];

  beforeAll(async () => {
    host = await startFixture('basic', {
      env: { OUT_QUEUE: 'unused-out', OUT_CONTAINER: 'unused-out' },
      log: (level, message) => logged.push({ level, message }),
    });
  });
  afterAll(async () => {
    await host.stop();
  });

  test('maps method, url, params, query, headers and body', async () => {
    const res = await fetch(url('/api/Echo/bob?a=1&a=2&b=x'), { method: 'POST', headers: { 'x-probe': 'p1' }, body: 'hello' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-echo')).toBe('yes');
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(await res.json()).toEqual({
      method: 'POST',
      url: `${host.baseUrl}/api/Echo/bob?a=1&a=2&b=x`,
      name: 'bob',
      query: { a: '1,2', b: 'x' },
      header: 'p1',
      body: 'hello',
    });
  });

  test('optional parameter may be absent; route constraint and %Setting% route', async () => {
    expect(((await (await fetch(url('/api/echo'))).json()) as { name: unknown }).name).toBeNull();
    const item = await fetch(url('/api/things/42'));
    expect(await item.json()).toEqual({ id: 42 });
    expect((await fetch(url('/api/things/forty-two'))).status).toBe(404);
  });

  test('404 for unknown routes, outside the prefix and for a wrong method (the real host answers 404, not 405)', async () => {
    expect((await fetch(url('/api/nope'))).status).toBe(404);
    expect((await fetch(url('/echo'))).status).toBe(404);
    const res = await fetch(url('/api/things/1'), { method: 'DELETE' });
    expect(res.status).toBe(404);
    expect(res.headers.get('allow')).toBeNull();
  });

  test('a handler returning nothing answers 204', async () => {
    const res = await fetch(url('/api/nothing'));
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
  });

  test('an unhandled error is a 500 that leaks nothing; the log has the stack', async () => {
    const res = await fetch(url('/api/boom'));
    expect(res.status).toBe(500);
    expect(await res.text()).toBe('');
    const errors = logged.filter((l) => l.level === 'error' && l.message.includes('secret internal detail'));
    expect(errors).toHaveLength(1);
    const message = errors[0]?.message ?? '';
    expect(message).toContain('Error: secret internal detail');
    // A frame in the handler that threw, with its line: the stack, not just the message.
    expect(message).toMatch(/\n\s+at .*fixtures[\\/]basic[\\/]src[\\/]http\.js:\d+:\d+/);
  });

  test('status, cookies and hooks (pre/post invocation, appStart)', async () => {
    const res = await fetch(url('/api/cookies'));
    expect(res.status).toBe(201);
    expect(res.headers.get('set-cookie')).toBe('session=a%20b; Path=/; Max-Age=60; HttpOnly; SameSite=Lax');
    expect(await (await fetch(url('/api/hooked'))).json()).toEqual({ hooked: true, pre: 'hooked' });
    expect(((await (await fetch(url('/api/settings'))).json()) as { started: boolean }).started).toBe(true);
  });

  test('CORS: preflight and simple requests for configured origins only', async () => {
    const preflight = await fetch(url('/api/echo'), {
      method: 'OPTIONS',
      headers: { origin: 'http://allowed.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'x-probe' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://allowed.example');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('PUT');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('x-probe');
    const simple = await fetch(url('/api/echo'), { headers: { origin: 'http://other.example' } });
    expect(simple.headers.get('access-control-allow-origin')).toBe('http://other.example');
    const denied = await fetch(url('/api/echo'), { headers: { origin: 'http://evil.example' } });
    expect(denied.status).toBe(200);
    expect(denied.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('admin endpoints list functions and host status', async () => {
    const headers = { 'x-functions-key': host.masterKey };
    expect((await fetch(url('/admin/functions'))).status).toBe(401);
    const functions = (await (await fetch(url('/admin/functions'), { headers })).json()) as {
      name: string;
      isDisabled: boolean;
      http?: { route: string };
    }[];
    const item = functions.find((f) => f.name === 'item');
    expect(item?.http?.route).toBe('things/{id:int}');
    expect(functions.find((f) => f.name === 'off')?.isDisabled).toBe(true);
    const status = (await (await fetch(url('/admin/host/status'), { headers })).json()) as { state: string };
    expect(status.state).toBe('Running');
    expect(await (await fetch(url('/admin/devhost/clock'), { headers })).json()).toEqual({ now: expect.any(String), virtual: false });
  });
});
