import { request } from 'node:http';

import type { RunningHost } from '../host';
import { startFixture } from './support';

describe.each(['direct', 'tcp'])('HTTP stream mode (app.setup({ enableHttpStream: true })), %s hand-over', (forwarding) => {
  let host: RunningHost;
  const url = (path: string): string => `${host.baseUrl}${path}`;

  beforeAll(async () => {
    host = await startFixture('stream', { env: { DEVHOST_STREAM_FORWARDING: forwarding } });
  });
  afterAll(async () => {
    await host.stop();
  });

  test('a server-sent-event response arrives in pieces, as written', async () => {
    const started = performance.now();
    const res = await fetch(url('/api/events/4?gap=150'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const arrivals: { at: number; text: string }[] = [];
    const decoder = new TextDecoder();
    for await (const chunk of res.body as AsyncIterable<Uint8Array>)
      arrivals.push({ at: performance.now() - started, text: decoder.decode(chunk) });
    const text = arrivals.map((a) => a.text).join('');
    expect(text).toBe([1, 2, 3, 4].map((n) => `id: ${n}\ndata: {"n":${n}}\n\n`).join(''));
    // Four events 150 ms apart: they cannot have come in one piece at the end.
    expect(arrivals.length).toBeGreaterThanOrEqual(3);
    const first = arrivals[0] as { at: number };
    const last = arrivals[arrivals.length - 1] as { at: number };
    expect(last.at - first.at).toBeGreaterThanOrEqual(300);
  });

  test('request body, params, query, headers and cookies go through the proxy', async () => {
    const body = 'x'.repeat(200_000);
    const res = await fetch(url('/api/upload/report?q=1'), { method: 'POST', headers: { 'x-probe': 'p' }, body });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      name: 'report',
      length: 200_000,
      header: 'p',
      query: '1',
      url: `${host.baseUrl}/api/upload/report?q=1`,
    });
    expect(res.headers.get('set-cookie')).toBe('seen=1');
  });

  test('CORS headers reach streamed responses, for configured origins only', async () => {
    const origin = 'http://allowed.example';
    const events = await fetch(url('/api/events/1?gap=0'), { headers: { origin } });
    expect(events.headers.get('access-control-allow-origin')).toBe(origin);
    expect(events.headers.get('vary')).toBe('Origin');
    await events.text();
    const upload = await fetch(url('/api/upload/x'), { method: 'POST', headers: { origin }, body: 'x' });
    expect(upload.headers.get('access-control-allow-origin')).toBe(origin);
    expect(upload.headers.get('set-cookie')).toBe('seen=1');
    await upload.text();
    const denied = await fetch(url('/api/events/1?gap=0'), { headers: { origin: 'http://evil.example' } });
    expect(denied.headers.get('access-control-allow-origin')).toBeNull();
    await denied.text();
  });

  test('nothing returned is 204; a thrown error is an empty 500', async () => {
    const nothing = await fetch(url('/api/nothing'));
    expect(nothing.status).toBe(204);
    const boom = await fetch(url('/api/boom'));
    expect(boom.status).toBe(500);
    expect(await boom.text()).toBe('');
  });

  test('a client that disconnects mid-stream does not disturb the host', async () => {
    await new Promise<void>((resolve, reject) => {
      const req = request(url('/api/events/50?gap=50'), (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
      req.end();
    });
    const res = await fetch(url('/api/plain'));
    expect(await res.text()).toBe('plain');
    // The abandoned stream ends on its own; the host must still be able to wait for its invocations.
    await expect(host.invoker.drain(10_000)).resolves.toBe(true);
  });
});
