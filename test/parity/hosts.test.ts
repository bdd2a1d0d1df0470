/**
 * Live parity: the same requests, in the same order, to the devhost and to the real Functions host,
 * each with keys on and fresh storage of its own, and the answers compared — status, content type,
 * the headers a client acts on, and the body's shape (members and their types, not values that
 * differ by nature: ids, times, keys). Runs only where the real host is available (the `parity` jest
 * project, like `e2e-real`; required under CI=true).
 *
 * A difference the devhost cannot or should not remove is listed in `knownDifferences` with the
 * reason; the test fails on any other difference, and on a listed one that no longer shows (so the
 * list stays true). The facts behind the devhost's behaviour: devhost/docs/real-host.md.
 */
import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';

import { type RunningAzurite, startAzurite } from '../../devhost/azurite';
import { type E2eHost, startDevhost, startE2eHost } from '../e2e/support/harness';
import { queuesPolledPromptly } from '../e2e/support/jobs';
import { until } from '../support/waits';

/** Which key goes with the call, in the header (`query` sends the function key as `?code=`). */
type Key = 'none' | 'function' | 'admin' | 'wrong' | 'query';

interface Call {
  /** Names the call in reports and in `knownDifferences`. */
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly key?: Key;
  readonly body?: unknown;
  /** Sent as is (with a JSON content type unless `type` says otherwise). */
  readonly raw?: string;
  readonly type?: string;
  /** Waits until this holds on the host before the call is made (for work done in the background). */
  readonly before?: (host: E2eHost) => Promise<void>;
}

interface Answer {
  readonly status: number;
  readonly type: string;
  readonly headers: Readonly<Record<string, boolean>>;
  readonly shape: string;
}

/** The headers whose presence a client acts on (values differ by nature: times, ids, hosts). */
const watchedHeaders = ['location', 'etag', 'retry-after', 'idempotent-replayed', 'www-authenticate'];

/** A value's shape: objects by sorted member names and their shapes, arrays by the set of their items' shapes. */
export function shapeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${[...new Set(value.map(shapeOf))].sort().join('|')}]`;
  if (typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b));
    return `{${members.map(([k, v]) => `${k}:${shapeOf(v)}`).join(',')}}`;
  }
  return typeof value;
}

const gate = 'parity-gate';
const sequence = 'parity-orders';
const counter = 'parity-views';
const stream = 'parity-events';
const schedule = 'parity-once';
const queue = 'app-parity-out';

/** Waits until `check` holds (no budget of its own: test/support/waits.ts). */
async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  await until(what, async () => ((await check()) ? true : undefined), { everyMs: 200 });
}

async function status(host: E2eHost, path: string): Promise<unknown> {
  const res = await fetch(host.url(path), { headers: { 'x-functions-key': host.keys.admin ?? '' } });
  return res.json();
}

/** Every capability's main calls, the refusals a caller meets, and the host's own routes. */
const calls: readonly Call[] = [
  { name: 'health', method: 'GET', path: '/api/health', key: 'none' },
  { name: 'openapi', method: 'GET', path: '/api/openapi.json', key: 'none' },
  { name: 'console page', method: 'GET', path: '/api/console', key: 'none' },
  { name: 'api docs page', method: 'GET', path: '/api/docs', key: 'none' },
  // Keys and levels.
  { name: 'function route, no key', method: 'GET', path: `/api/gates/${gate}`, key: 'none' },
  { name: 'function route, unknown key', method: 'GET', path: `/api/gates/${gate}`, key: 'wrong' },
  { name: 'admin route, function key', method: 'PUT', path: `/api/gates/${gate}`, key: 'function', body: {} },
  { name: 'host admin API, function key', method: 'GET', path: '/admin/host/status', key: 'function' },
  { name: 'host admin API, no key', method: 'GET', path: '/admin/host/status', key: 'none' },
  { name: 'host admin API, master key', method: 'GET', path: '/admin/host/status', key: 'admin' },
  { name: 'Durable HTTP API, function key', method: 'GET', path: '/runtime/webhooks/durabletask/instances', key: 'function' },
  { name: 'Durable HTTP API, no key', method: 'GET', path: '/runtime/webhooks/durabletask/instances', key: 'none' },
  { name: 'worker-facing Durable API on the public port', method: 'GET', path: '/durabletask/instances', key: 'admin' },
  { name: 'function key in ?code=', method: 'GET', path: `/api/sequences/${sequence}`, key: 'query' },
  // Routing and paths.
  { name: 'unknown path under /api', method: 'GET', path: '/api/parity-nowhere/deeper' },
  { name: 'route in other letter case', method: 'GET', path: `/api/SEQUENCES/${sequence}` },
  { name: 'trailing slash', method: 'GET', path: `/api/sequences/${sequence}/` },
  { name: 'HEAD on a GET route', method: 'HEAD', path: '/api/health', key: 'none' },
  {
    name: 'body over the limit',
    method: 'POST',
    path: `/api/sequences/${sequence}/next`,
    raw: `{"count":1,"pad":"${'x'.repeat(2_000_000)}"}`,
  },
  { name: 'path starting with //', method: 'GET', path: '//evil.example/api/console', key: 'none' },
  { name: 'wrong method on a route', method: 'DELETE', path: `/api/sequences/${sequence}/next` },
  // Sequences.
  {
    name: 'sequence create',
    method: 'PUT',
    path: `/api/sequences/${sequence}`,
    key: 'admin',
    body: { prefix: 'ORD-', width: 7, checkDigit: true },
  },
  {
    name: 'sequence create again',
    method: 'PUT',
    path: `/api/sequences/${sequence}`,
    key: 'admin',
    body: { prefix: 'ORD-', width: 7, checkDigit: true },
  },
  { name: 'sequence next', method: 'POST', path: `/api/sequences/${sequence}/next`, body: { count: 3 } },
  { name: 'sequence read', method: 'GET', path: `/api/sequences/${sequence}` },
  { name: 'sequence validate', method: 'GET', path: `/api/sequences/${sequence}/validate/ORD-0000001-3` },
  { name: 'sequence next, bad count', method: 'POST', path: `/api/sequences/${sequence}/next`, body: { count: 0 } },
  { name: 'sequence next, not JSON', method: 'POST', path: `/api/sequences/${sequence}/next`, raw: '{"count":', type: 'application/json' },
  {
    name: 'sequence next, form body',
    method: 'POST',
    path: `/api/sequences/${sequence}/next`,
    raw: 'count=1',
    type: 'application/x-www-form-urlencoded',
  },
  { name: 'unknown sequence', method: 'GET', path: '/api/sequences/parity-never' },
  // Counters.
  { name: 'counter create', method: 'PUT', path: `/api/counters/${counter}`, key: 'admin', body: {} },
  { name: 'counter increment', method: 'POST', path: `/api/counters/${counter}/increment`, body: { by: 2 } },
  { name: 'counter read', method: 'GET', path: `/api/counters/${counter}` },
  { name: 'counter increment, fraction', method: 'POST', path: `/api/counters/${counter}/increment`, body: { by: 2.5 } },
  { name: 'counters list', method: 'GET', path: '/api/counters', key: 'admin' },
  // Gates.
  { name: 'gate create', method: 'PUT', path: `/api/gates/${gate}`, key: 'admin', body: {} },
  { name: 'gate read', method: 'GET', path: `/api/gates/${gate}` },
  { name: 'gate long poll, closed', method: 'GET', path: `/api/gates/${gate}/wait?timeout=1` },
  {
    name: 'gated run start',
    method: 'POST',
    path: `/api/gates/${gate}/runs`,
    body: { runId: 'r1' },
  },
  {
    name: 'gated run waiting',
    method: 'GET',
    path: `/api/gates/${gate}/runs/r1`,
    before: (host) =>
      // The run's own status says it waits (a start answers once the run is registered, so at once).
      waitFor(
        'the run to wait',
        async () => ((await status(host, `/api/gates/${gate}/runs/r1`)) as { state?: string }).state === 'waiting',
      ),
  },
  { name: 'gate release', method: 'POST', path: `/api/gates/${gate}/release`, key: 'admin', body: { by: 'parity' } },
  { name: 'gate release again', method: 'POST', path: `/api/gates/${gate}/release`, key: 'admin', body: { by: 'parity' } },
  {
    name: 'gated run proceeded',
    method: 'GET',
    path: `/api/gates/${gate}/runs/r1`,
    before: (host) =>
      waitFor(
        'the run to proceed',
        async () => ((await status(host, `/api/gates/${gate}/runs/r1`)) as { state?: string }).state === 'proceeded',
      ),
  },
  { name: 'gate long poll, released', method: 'GET', path: `/api/gates/${gate}/wait?timeout=1` },
  { name: 'gate audit', method: 'GET', path: `/api/gates/${gate}/audit`, key: 'admin' },
  { name: 'gate, bad name', method: 'PUT', path: '/api/gates/bad%20name', key: 'admin', body: {} },
  // Schedules.
  {
    name: 'schedule create',
    method: 'POST',
    path: '/api/schedules',
    body: { id: schedule, at: '2099-01-01T00:00:00Z', target: { type: 'queueMessage', queue, message: 1 } },
  },
  {
    name: 'schedule read',
    method: 'GET',
    path: `/api/schedules/${schedule}`,
    before: (host) =>
      waitFor(
        'the schedule to start',
        async () => ((await status(host, `/api/schedules/${schedule}`)) as { state: string }).state === 'active',
      ),
  },
  {
    name: 'schedule, gateRelease at function level',
    method: 'POST',
    path: '/api/schedules',
    body: { at: '2099-01-01T00:00:00Z', target: { type: 'gateRelease', gate } },
  },
  { name: 'schedule cancel', method: 'DELETE', path: `/api/schedules/${schedule}`, key: 'admin' },
  // Jobs.
  {
    name: 'job submit',
    method: 'POST',
    path: '/api/jobs',
    body: {
      processor: 'billing',
      items: [
        { id: 'tx-1', customerId: 'c-1', amountMinor: 1999, currency: 'EUR', taxCategory: 'standard', occurredAt: '2026-03-01T12:00:00Z' },
      ],
    },
  },
  { name: 'job, unknown', method: 'GET', path: '/api/jobs/20260101000000-0000000000' },
  { name: 'job, bad id', method: 'GET', path: '/api/jobs/NOT_AN_ID' },
  {
    name: 'jobs list',
    method: 'GET',
    path: '/api/jobs',
    key: 'admin',
    // Once the job (and its billing delivery) is done on this host, so both lists show the same stage.
    before: (host) =>
      waitFor('the job to finish', async () => {
        const list = (await status(host, '/api/jobs')) as { items: { state: string; delivery: string }[] };
        return list.items.every((j) => j.state === 'completed' && j.delivery === 'delivered');
      }),
  },
  // Streams.
  { name: 'stream append', method: 'POST', path: `/api/streams/${stream}/events`, body: { producer: 'p1', seq: 1, data: { n: 1 } } },
  {
    name: 'stream append, duplicate',
    method: 'POST',
    path: `/api/streams/${stream}/events`,
    body: { producer: 'p1', seq: 1, data: { n: 1 } },
  },
  {
    name: 'stream append, flushed',
    method: 'POST',
    path: `/api/streams/${stream}/events?ack=flushed`,
    body: { producer: 'p1', seq: 2, data: { n: 2 } },
  },
  { name: 'stream read', method: 'GET', path: `/api/streams/${stream}` },
  { name: 'stream flush', method: 'POST', path: `/api/streams/${stream}/flush`, key: 'admin' },
  { name: 'stream, the app ledger', method: 'POST', path: '/api/streams/billing-invoices/events', body: { producer: 'p1', seq: 1 } },
];

/**
 * Differences that remain, each with its reason. Keyed by call name; the value is what differs
 * ('status', 'type', 'shape' or a header name).
 */
const knownDifferences: Readonly<Record<string, { readonly differs: readonly string[]; readonly why: string }>> = {};

describe('live parity: the same calls to the devhost and to the real host', () => {
  let azurites: RunningAzurite[] = [];
  let devhost: E2eHost;
  let real: E2eHost;

  beforeAll(async () => {
    azurites = await Promise.all([startAzurite(), startAzurite()]);
    const [forDevhost, forReal] = azurites as [RunningAzurite, RunningAzurite];
    // The same settings on both; keys on (the devhost with keys of its own, the real host with its build's).
    const env = {
      ...queuesPolledPromptly,
      TALLYHO_STREAMS_FLUSH_INTERVAL_MS: '200',
      TALLYHO_GATES_WATCH_INTERVAL_MS: '250',
    };
    [devhost, real] = await Promise.all([
      startDevhost({
        env: { ...env, AzureWebJobsStorage: forDevhost.connectionString },
        keys: { admin: 'parity-admin', function: 'parity-fn' },
      }),
      startE2eHost({ env: { ...env, AzureWebJobsStorage: forReal.connectionString } }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([devhost?.dispose(), real?.dispose()]);
    await Promise.all(azurites.map((a) => a.stop()));
  });

  async function send(host: E2eHost, call: Call): Promise<Answer> {
    await call.before?.(host);
    const headers: Record<string, string> = {};
    const key = call.key ?? 'function';
    const value = key === 'admin' ? host.keys.admin : key === 'function' ? host.keys.function : key === 'wrong' ? 'not-a-key' : undefined;
    if (value !== undefined) headers['x-functions-key'] = value;
    const query = key === 'query' ? `${call.path.includes('?') ? '&' : '?'}code=${encodeURIComponent(host.keys.function ?? '')}` : '';
    const body = call.raw ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
    if (body !== undefined) headers['content-type'] = call.type ?? 'application/json';
    // fetch would normalise `//evil.example/…` away; the URL is built from parts so the path is sent as is.
    const res = await fetch(`${host.baseUrl}${call.path}${query}`, {
      method: call.method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const type = (res.headers.get('content-type') ?? '').split(';')[0] ?? '';
    const text = await res.text();
    let shape = text === '' ? 'empty' : 'text';
    if (text !== '' && /json/.test(type)) shape = shapeOf(JSON.parse(text));
    return {
      status: res.status,
      type,
      headers: Object.fromEntries(watchedHeaders.map((h) => [h, res.headers.has(h)])),
      shape,
    };
  }

  test('every call answers alike, but for the differences listed with their reasons', async () => {
    const found: Record<string, string[]> = {};
    const details: string[] = [];
    for (const call of calls) {
      const [d, r] = await Promise.all([send(devhost, call), send(real, call)]);
      const differs: string[] = [];
      if (d.status !== r.status) differs.push('status');
      if (d.type !== r.type) differs.push('type');
      if (d.shape !== r.shape) differs.push('shape');
      for (const h of watchedHeaders) if (d.headers[h] !== r.headers[h]) differs.push(h);
      if (differs.length > 0) {
        found[call.name] = differs;
        details.push(`${call.name} (${call.method} ${call.path}): devhost ${JSON.stringify(d)}\n    real host ${JSON.stringify(r)}`);
      }
    }
    const expected = Object.fromEntries(Object.entries(knownDifferences).map(([name, k]) => [name, [...k.differs]]));
    if (JSON.stringify(found) !== JSON.stringify(expected)) {
      throw new Error(`Differences between the hosts (expected only the known ones):\n  ${details.join('\n  ')}`);
    }
    expect(found).toEqual(expected);
  });

  /**
   * Two requests on one kept-alive connection, `idleMs` apart: whether the second went out on the
   * first's socket, and whether the host closed that socket in between.
   */
  async function twoRequestsOneConnection(
    host: E2eHost,
    idleMs: number,
  ): Promise<{ reused: boolean; closedWhileIdle: boolean; statuses: number[] }> {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const once = () =>
      new Promise<{ status: number; reused: boolean; socket: Socket }>((resolve, reject) => {
        const req = request(new URL('/api/health', host.baseUrl), { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket, socket: req.socket as Socket }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      const first = await once();
      let closedWhileIdle = false;
      first.socket.once('close', () => (closedWhileIdle = true));
      await new Promise((resolve) => setTimeout(resolve, idleMs));
      const second = await once();
      return { reused: second.reused && second.socket === first.socket, closedWhileIdle, statuses: [first.status, second.status] };
    } finally {
      agent.destroy();
    }
  }

  // The idle time is the behaviour under test (longer than Node's default keep-alive of 5 s, which the
  // devhost had), not a budget: a slow machine makes it no shorter.
  test('a kept-alive connection left idle for 8 s carries the next request on both hosts (Kestrel keeps one 130 s)', async () => {
    const [d, r] = await Promise.all([twoRequestsOneConnection(devhost, 8000), twoRequestsOneConnection(real, 8000)]);
    expect(r).toEqual({ reused: true, closedWhileIdle: false, statuses: [200, 200] });
    expect(d).toEqual(r);
  });
});
