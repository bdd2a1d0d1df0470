/**
 * Gate release latency and idle cost, on Azurite and the devhost (started in this process with the
 * app, through a counting proxy in front of Azurite). For N = 100 and 1,000 waiters of each kind:
 *   - durable gated runs (`POST /api/gates/{name}/runs`): latency from the release call to each run
 *     proceeding (the run's own `proceededAt`, stamped by the engine's clock in this process);
 *   - long-poll clients (`GET …/wait?timeout=60`, re-asked on timeout) and SSE clients (`GET …/events`):
 *     latency from the release call to the client receiving the release;
 *   - the baseline, measured in the same run: N clients polling `GET /api/gates/{name}` every 2.5 s
 *     (random phase, with If-None-Match), latency to the first poll that sees the release.
 * Idle cost per design while N wait, over a 10 s window: storage requests counted at a proxy in front
 * of Azurite (everything the host and app send; the floor with nothing waiting is printed first); and
 * gate state reads (each a read of the entity's state — on Azure Storage a storage read; the devhost
 * serves them from memory): the watchers' reads from the process's watch hub, the baseline's polls
 * counted by the clients.
 */
import { performance } from 'node:perf_hooks';
import { resolve } from 'node:path';

import { startAzurite } from '../devhost/azurite';
import { defaultExtensions } from '../devhost/extensions';
import { startHost } from '../devhost/host';
import { startCountingProxy } from './support/countingProxy';
import { header, Latency, machine, ratio, type Row, table } from './support/report';

/** GATES_BENCH_SIZES=20 for a quick smoke run; the published figures use the default. */
const sizes = (process.env.GATES_BENCH_SIZES ?? '100,1000').split(',').map(Number);
const pollIntervalMs = 2500;
const idleWindowMs = 10_000;
const watchIntervalMs = 1000;
const startConcurrency = 32;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Env {
  readonly baseUrl: string;
  readonly storageRequests: () => number;
  /** State reads the app's watch hub has made. */
  readonly hubReads: () => number;
}

async function call<T>(env: Env, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${env.baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

interface GateView {
  state: string;
  waiters: { waiting: number; proceeded: number };
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 300_000, everyMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

async function pool(n: number, limit: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, n) }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

interface Measured {
  readonly latency: Latency;
  readonly storagePerMin: number;
  readonly readsPerMin: number;
  readonly releaseCallMs: number;
  readonly note?: string;
}

/** Idle cost while `n` wait: storage requests and state reads per minute over the window. */
async function idleWindow(env: Env, reads: () => number): Promise<{ storagePerMin: number; readsPerMin: number }> {
  const storage0 = env.storageRequests();
  const reads0 = reads();
  await sleep(idleWindowMs);
  const perMin = 60_000 / idleWindowMs;
  return { storagePerMin: (env.storageRequests() - storage0) * perMin, readsPerMin: (reads() - reads0) * perMin };
}

async function release(env: Env, gate: string): Promise<{ t0: number; ms: number }> {
  const t0 = Date.now();
  const started = performance.now();
  const res = await call(env, 'POST', `/api/gates/${gate}/release`, { by: 'bench' });
  if (res.status !== 200) throw new Error(`release answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { t0, ms: performance.now() - started };
}

interface InstanceStatus {
  runtimeStatus: string;
  output: { proceededAt: string } | null;
}

async function runStatuses(env: Env, gate: string): Promise<InstanceStatus[]> {
  const all: InstanceStatus[] = [];
  let token: string | null = null;
  do {
    const res: Response = await fetch(
      `${env.baseUrl}/runtime/webhooks/durabletask/instances?instanceIdPrefix=${encodeURIComponent(`gate:${gate}:run:`)}&top=1000`,
      { headers: token === null ? {} : { 'x-ms-continuation-token': token } },
    );
    all.push(...((await res.json()) as InstanceStatus[]));
    token = res.headers.get('x-ms-continuation-token');
  } while (token !== null && token !== '');
  return all;
}

async function durableRuns(env: Env, n: number): Promise<Measured> {
  const gate = `bench-runs-${n}-${Date.now()}`;
  await call(env, 'PUT', `/api/gates/${gate}`);
  await pool(n, startConcurrency, async () => {
    const res = await call(env, 'POST', `/api/gates/${gate}/runs`, {});
    if (res.status !== 202) throw new Error(`starting a run answered ${res.status}`);
  });
  await until(`${n} runs waiting`, async () => (await call<GateView>(env, 'GET', `/api/gates/${gate}`)).body.waiters.waiting >= n);
  const idle = await idleWindow(env, () => 0);
  const { t0, ms } = await release(env, gate);
  // Watch the gate's cheap "proceeded" count while the release spreads; listing 1,000 instance
  // statuses every few hundred milliseconds would compete with the work being measured.
  await until(`${n} runs proceeded`, async () => (await call<GateView>(env, 'GET', `/api/gates/${gate}`)).body.waiters.proceeded >= n);
  let statuses: InstanceStatus[] = [];
  await until(`${n} runs completed`, async () => {
    statuses = await runStatuses(env, gate);
    return statuses.length === n && statuses.every((s) => s.runtimeStatus === 'Completed');
  });
  const latency = new Latency();
  for (const s of statuses) latency.recordMs(Date.parse(s.output?.proceededAt ?? '') - t0);
  return { latency, ...idle, releaseCallMs: ms, note: 'push (Durable event)' };
}

async function longPollClients(env: Env, n: number): Promise<Measured> {
  const gate = `bench-wait-${n}-${Date.now()}`;
  await call(env, 'PUT', `/api/gates/${gate}`);
  const seen: number[] = [];
  const clients = Array.from({ length: n }, async () => {
    for (;;) {
      const res = await call<{ released: boolean }>(env, 'GET', `/api/gates/${gate}/wait?timeout=60`);
      if (res.body.released) {
        seen.push(Date.now());
        return;
      }
    }
  });
  await sleep(2000);
  return releaseWatched(env, gate, clients, seen);
}

/** Idle window while the clients wait, the release, and each client's latency to hearing of it. */
async function releaseWatched(env: Env, gate: string, clients: Promise<void>[], seen: number[]): Promise<Measured> {
  const idle = await idleWindow(env, env.hubReads);
  const { t0, ms } = await release(env, gate);
  await Promise.all(clients);
  const latency = new Latency();
  for (const at of seen) latency.recordMs(at - t0);
  return { latency, ...idle, releaseCallMs: ms, note: `watch hub, ${watchIntervalMs} ms reads` };
}

async function sseClients(env: Env, n: number): Promise<Measured> {
  const gate = `bench-sse-${n}-${Date.now()}`;
  await call(env, 'PUT', `/api/gates/${gate}`);
  const seen: number[] = [];
  let connected = 0;
  const clients = Array.from({ length: n }, async () => {
    const controller = new AbortController();
    const res = await fetch(`${env.baseUrl}/api/gates/${gate}/events`, { signal: controller.signal });
    if (res.body === null) throw new Error('no event stream');
    connected++;
    const decoder = new TextDecoder();
    let text = '';
    try {
      for await (const chunk of res.body) {
        text += decoder.decode(chunk as Uint8Array, { stream: true });
        if (text.includes('event: released')) {
          seen.push(Date.now());
          controller.abort();
          return;
        }
      }
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    }
  });
  await until(`${n} event streams open`, () => Promise.resolve(connected >= n), 60_000, 50);
  await sleep(1000);
  return releaseWatched(env, gate, clients, seen);
}

async function pollingBaseline(env: Env, n: number): Promise<Measured> {
  const gate = `bench-poll-${n}-${Date.now()}`;
  await call(env, 'PUT', `/api/gates/${gate}`);
  let polls = 0;
  let stop = false;
  const seen: number[] = [];
  const clients = Array.from({ length: n }, async () => {
    let etag: string | null = null;
    await sleep(Math.random() * pollIntervalMs);
    while (!stop) {
      polls++;
      const res: Response = await fetch(`${env.baseUrl}/api/gates/${gate}`, { headers: etag === null ? {} : { 'if-none-match': etag } });
      if (res.status === 200) {
        etag = res.headers.get('etag');
        if (((await res.json()) as GateView).state === 'released') {
          seen.push(Date.now());
          return;
        }
      } else await res.arrayBuffer();
      await sleep(pollIntervalMs);
    }
  });
  await sleep(pollIntervalMs + 500);
  const idle = await idleWindow(env, () => polls);
  const { t0, ms } = await release(env, gate);
  await Promise.race([Promise.all(clients), sleep(4 * pollIntervalMs)]);
  stop = true;
  const latency = new Latency();
  for (const at of seen) latency.recordMs(at - t0);
  return { latency, ...idle, releaseCallMs: ms, note: `each client GETs every ${pollIntervalMs} ms` };
}

function row(design: string, n: number, m: Measured): Row {
  const s = m.latency.summary();
  return {
    design,
    waiters: String(n),
    'p50 ms': s.p50,
    'p99 ms': s.p99,
    'max ms': s.max,
    'release call ms': m.releaseCallMs,
    'idle state reads/min': m.readsPerMin,
    'idle storage req/min': m.storagePerMin,
    how: m.note ?? '',
  };
}

async function main(): Promise<void> {
  header('gates');
  const azurite = await startAzurite({});
  const proxy = await startCountingProxy(azurite.ports);
  let storageRequests = 0;
  const countStorage = (): number => (storageRequests += proxy.take().length);
  const host = await startHost({
    appRoot: resolve(__dirname, '..', '..'),
    port: 0,
    quiet: true,
    extensions: defaultExtensions(),
    env: {
      AzureWebJobsStorage: proxy.connectionString,
      TALLYHO_TASK_HUB: `benchgates${Date.now() % 100000}`,
      TALLYHO_GATES_WATCH_INTERVAL_MS: String(watchIntervalMs),
      TALLYHO_GATES_MAX_WAITERS: '5000',
    },
  });
  // The host loaded the app afresh (dropping this process's copies from the module cache): take
  // the watch hub from the app the host's copy of functions/_app built.
  const { theApp } = await import('../functions/_app.js');
  const env: Env = { baseUrl: host.baseUrl, storageRequests: countStorage, hubReads: () => theApp().gates.hub.stats().reads };
  const rows: Row[] = [];
  try {
    // Warm-up: load every code path once.
    await durableRuns(env, 5);
    await longPollClients(env, 5);
    // What the host spends with nothing waiting: its queue listeners' polling (backing off over time).
    const floor = await idleWindow(env, () => 0);
    console.log(`Idle floor: ${floor.storagePerMin} storage requests/min with nothing waiting (the host's queue and timer listeners)`);
    for (const n of sizes) {
      const baseline = await pollingBaseline(env, n);
      const runs = await durableRuns(env, n);
      const polls = await longPollClients(env, n);
      const streams = await sseClients(env, n);
      rows.push(
        row('durable gated runs', n, runs),
        row('long-poll clients', n, polls),
        row('SSE clients', n, streams),
        row('baseline: polling 2.5 s', n, baseline),
      );
      const base = baseline.latency.percentileMs(99);
      ratio(`p99 release latency, ${n} durable runs vs polling`, runs.latency.percentileMs(99), base, { atMost: 1 });
      ratio(`p99 release latency, ${n} long-poll clients vs polling`, polls.latency.percentileMs(99), base, { atMost: 1 });
      ratio(`p99 release latency, ${n} SSE clients vs polling`, streams.latency.percentileMs(99), base, { atMost: 1 });
      ratio(`idle state reads/min, ${n} watchers (long-poll) vs polling`, polls.readsPerMin, baseline.readsPerMin, { atMost: 1 });
      if (n === 1000) {
        const p99 = runs.latency.percentileMs(99);
        console.log(`TARGET p99 < 1000 ms for 1,000 durable waiters: ${p99.toFixed(0)} ms — ${p99 < 1000 ? 'met' : 'NOT met'}`);
      }
    }
    table(`Gate release, ${machine()}`, rows);
  } finally {
    await host.stop();
    await proxy.close();
    await azurite.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
