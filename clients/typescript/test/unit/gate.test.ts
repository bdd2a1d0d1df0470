import { Gate } from '../../src/gate';
import type { GateView } from '../../src/types';
import { settle } from '../support/fakeClock';
import { fakeTransport } from '../support/fakeTransport';
import { type Handler, json } from '../support/fakeFetch';

function view(state: 'closed' | 'released', generation = 1): GateView {
  return {
    name: 'launch',
    state,
    generation,
    createdAt: '2026-01-01T00:00:00Z',
    generationStartedAt: '2026-01-01T00:00:00Z',
    releaseAt: null,
    releasedAt: state === 'released' ? '2026-01-01T00:01:00Z' : null,
    releasedBy: state === 'released' ? 'ops' : null,
    releaseHow: state === 'released' ? 'api' : null,
    releaseNote: null,
    waiters: { waiting: 0, registered: 0, late: 0, proceeded: 0 },
  };
}

const etagOf = (state: string) => `"g1-${state}"`;
const event = (state: 'closed' | 'released') =>
  `event: ${state === 'released' ? 'released' : 'state'}\nid: ${etagOf(state)}\ndata: ${JSON.stringify(view(state))}\n\n`;

/** An event stream the test writes to, ends, or breaks. */
function sse() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => (controller = c) });
  const encoder = new TextEncoder();
  return {
    response: new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
    write: (text: string) => controller.enqueue(encoder.encode(text)),
    end: () => controller.close(),
    cut: () => controller.error(new TypeError('terminated')),
  };
}

function gate(handler: Handler, options: ConstructorParameters<typeof Gate>[2] = {}) {
  const { transport, clock, requests } = fakeTransport(handler);
  return { gate: new Gate(transport, 'launch', options), clock, requests };
}

const closedRead = () => json(200, view('closed'), { etag: etagOf('closed') });
const notServed = () => new Response('no such route', { status: 404, headers: { 'content-type': 'text/plain' } });

describe('Gate.wait', () => {
  test('a late joiner returns at once from the first read, without subscribing', async () => {
    const { gate: g, requests } = gate(() => json(200, view('released'), { etag: etagOf('released') }));
    await expect(g.wait()).resolves.toMatchObject({ state: 'released' });
    expect(requests.map((r) => r.path)).toEqual(['gates/launch']);
  });

  test('reads first, then subscribes with Last-Event-ID and returns at the released event', async () => {
    const stream = sse();
    const { gate: g, requests } = gate((r) => (r.path.endsWith('/events') ? stream.response : closedRead()));
    const waiting = g.wait();
    await settle();
    stream.write(event('closed'));
    stream.write(': heartbeat\n\n');
    await settle();
    stream.write(event('released'));
    await expect(waiting).resolves.toMatchObject({ state: 'released', releasedBy: 'ops' });
    expect(requests.map((r) => r.path)).toEqual(['gates/launch', 'gates/launch/events']);
    expect(requests[1]?.headers).toMatchObject({ accept: 'text/event-stream', 'last-event-id': etagOf('closed') });
  });

  test('a stream that keeps dropping reconnects with jittered exponential back-off and still sees the release', async () => {
    const streams = [sse(), sse(), sse(), sse()];
    let connects = 0;
    const {
      gate: g,
      clock,
      requests,
    } = gate((r) => {
      if (!r.path.endsWith('/events')) return closedRead();
      const s = streams[connects++];
      if (s === undefined) throw new Error('too many connects');
      return s.response;
    });
    const waiting = g.wait();
    for (let i = 0; i < 3; i++) {
      await settle();
      streams[i]?.cut();
      await clock.advance(30_000);
    }
    streams[3]?.write(event('released'));
    await expect(waiting).resolves.toMatchObject({ state: 'released' });
    // random() = 0.5 → three quarters of 1 s, 2 s, 4 s: the delay doubles with each failure in a row.
    expect(clock.sleeps.filter((ms) => ms < 30_000 && ms !== 45_000)).toEqual([750, 1500, 3000]);
    expect(requests.filter((r) => r.path.endsWith('/events'))).toHaveLength(4);
  });

  test('the reconnect delay stops growing at the cap', async () => {
    let connects = 0;
    const { gate: g, clock } = gate(
      (r) => {
        if (!r.path.endsWith('/events')) return closedRead();
        connects++;
        throw new TypeError('connection refused');
      },
      { reconnect: { baseMs: 1000, capMs: 5000 } },
    );
    const controller = new AbortController();
    const waiting = g.wait({ abortSignal: controller.signal }).catch((e: unknown) => e);
    await clock.advance(60_000);
    controller.abort(new Error('stop'));
    await waiting;
    const delays = clock.sleeps.filter((ms) => ms !== 45_000 && ms !== 30_000);
    expect(connects).toBeGreaterThan(6);
    expect(delays.slice(0, 5)).toEqual([750, 1500, 3000, 3750, 3750]);
    expect(Math.max(...delays)).toBe(3750);
  });

  test('a stream silent past the heartbeat timeout is dropped and reopened', async () => {
    const first = sse();
    const second = sse();
    let connects = 0;
    const {
      gate: g,
      clock,
      requests,
    } = gate((r) => (r.path.endsWith('/events') ? (connects++ === 0 ? first.response : second.response) : closedRead()), {
      heartbeatTimeoutMs: 10_000,
    });
    const waiting = g.wait();
    await settle();
    first.write(event('closed'));
    await clock.advance(9_000);
    expect(connects).toBe(1);
    await clock.advance(2_000 + 1_000);
    expect(connects).toBe(2);
    expect(requests[1]?.signal?.aborted).toBe(true);
    second.write(event('released'));
    await expect(waiting).resolves.toMatchObject({ state: 'released' });
  });

  test('without event streams it long-polls, and without long polls it reads with If-None-Match', async () => {
    let reads = 0;
    const {
      gate: g,
      clock,
      requests,
    } = gate((r) => {
      if (r.path.endsWith('/events') || r.path.endsWith('/wait')) return notServed();
      reads++;
      if (reads === 1) return closedRead();
      if (reads === 2) return new Response(null, { status: 304, headers: { etag: etagOf('closed') } });
      return json(200, view('released'), { etag: etagOf('released') });
    });
    const waiting = g.wait();
    await clock.advance(10_000);
    await expect(waiting).resolves.toMatchObject({ state: 'released' });
    expect(requests.map((r) => `${r.path}${r.query.size > 0 ? `?${r.query.toString()}` : ''}`)).toEqual([
      'gates/launch',
      'gates/launch/events',
      'gates/launch/wait?timeout=30&generation=1',
      'gates/launch',
      'gates/launch',
    ]);
    expect(requests[3]?.headers['if-none-match']).toBe(etagOf('closed'));
  });

  test('long polls answer the release', async () => {
    const { gate: g, requests } = gate((r) => {
      if (r.path.endsWith('/events')) return json(200, { not: 'a stream' });
      if (r.path.endsWith('/wait'))
        return json(200, { released: true, timedOut: false, gate: view('released') }, { etag: etagOf('released') });
      return closedRead();
    });
    await expect(g.wait()).resolves.toMatchObject({ state: 'released' });
    expect(requests.map((r) => r.path)).toEqual(['gates/launch', 'gates/launch/events', 'gates/launch/wait']);
  });

  test('timeout rejects with a Timeout error; a missing gate is an error, not a retry loop', async () => {
    const stream = sse();
    const { gate: g, clock } = gate((r) => (r.path.endsWith('/events') ? stream.response : closedRead()));
    const waiting = g.wait({ timeout: 5000 }).catch((e: unknown) => e);
    await clock.advance(5000);
    expect(await waiting).toMatchObject({ code: 'Timeout' });

    const missing = gate(() =>
      json(
        404,
        { type: 'x', title: 'Not found', status: 404, detail: 'No gate', code: 'NotFound' },
        { 'content-type': 'application/problem+json' },
      ),
    );
    await expect(missing.gate.wait()).rejects.toMatchObject({ code: 'NotFound' });
  });
});

describe('Gate.watch', () => {
  test('yields each distinct state once, across reconnects', async () => {
    const streams = [sse(), sse()];
    let connects = 0;
    const { gate: g, clock } = gate((r) => (r.path.endsWith('/events') ? streams[connects++]!.response : closedRead()));
    const seen: string[] = [];
    const watching = (async () => {
      for await (const v of g.watch()) {
        seen.push(v.state);
        if (v.state === 'released') return;
      }
    })();
    await settle();
    streams[0]?.write(event('closed'));
    streams[0]?.end();
    await clock.advance(2000);
    streams[1]?.write(event('closed'));
    streams[1]?.write(event('released'));
    await watching;
    expect(seen).toEqual(['closed', 'released']);
  });
});
