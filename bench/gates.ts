/**
 * Gate release latency and cost, against any host (bench/support/benchHost.ts: the devhost in this
 * process by default, the real Functions host with BENCH_HOST=real or `--real-host`, a running host
 * with BENCH_URL), on Azurite behind a counting proxy. For each size N (GATES_BENCH_SIZES, default
 * 100,1000) and each design (GATES_BENCH_DESIGNS, default all):
 *   - `runs`: N gated runs without an action (`POST /api/gates/{name}/runs`); latency from the
 *     release call to each run's `proceededAt` as its status route reports it;
 *   - `actions`: N gated runs with an `enqueue` action; latency from the release call to a consumer
 *     (this process, four receivers on the `gate-actions` queue) receiving the run's message; with
 *     it, the queue alone (the same messages sent by this process), in GATES_BENCH_PAIRS pairs;
 *   - `longpoll` / `sse`: N clients of `GET …/wait?timeout=60` (re-asked on timeout) or `GET …/events`;
 *     latency from the release call to the client hearing of it;
 *   - `poll`, the baseline measured in the same run: N clients polling `GET /api/gates/{name}` every
 *     2.5 s (random phase, If-None-Match), latency to the first poll that sees the release;
 *   - `concurrent`: while a release of N action runs is in flight, another gate's create, read and
 *     release, again and again, each timed.
 * Cost per run (runs, actions): every storage request the host sends (what Azure bills as storage
 * transactions), the messages put on the task hub's control and work-item queues, and the executions
 * of orchestrators, activities and entities — while starting the N runs and from the release until
 * the last run proceeded and the host went quiet — net of the host's idle floor over the same time.
 * Idle cost while N wait, over 10 s: storage requests and (devhost) the watch hub's state reads.
 * Each phase prints the machine's load average (as `uptime` does): the machine is shared.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';

import { QueueClient } from '@azure/storage-queue';

import { type BenchHost, benchHostKind, startBenchHost, storageDirect, type WorkCount, workBetween } from './support/benchHost';
import { batchBreakdown } from './support/gateBatches';
import { processCpuMs } from './support/proc';
import { header, Latency, machine, median, pairedRatio, ratio, type Row, table } from './support/report';

const sizes = (process.env.GATES_BENCH_SIZES ?? '100,1000').split(',').map(Number);
const designs = new Set((process.env.GATES_BENCH_DESIGNS ?? 'runs,actions,longpoll,sse,poll,concurrent').split(','));
/**
 * Runs released (and messages sent straight to the queue) once before anything is measured, so that
 * both sides of the action ratio send from code the runtime has compiled: the first thousand sends
 * of a process cost about twice the CPU of the next thousand (JIT warm-up, measured with the queue
 * SDK alone against Azurite: 1.83 s against 0.77 s), and the release and the baseline send from
 * different processes. GATES_BENCH_WARMUP=5 measures the release on a host that has sent next to nothing.
 */
const warmUp = Number(process.env.GATES_BENCH_WARMUP ?? 1000);
/**
 * Releases and queue-alone baselines measured per size, in pairs run back to back (the order
 * alternating): on the 2-core machine one pair's p99s moved by up to 1.6× between runs of the same
 * code, so the figure held against the targets is the median over the pairs (GATES_BENCH_PAIRS).
 */
const pairsPerSize = Number(process.env.GATES_BENCH_PAIRS ?? 5);
const pollIntervalMs = 2500;
const idleWindowMs = 10_000;
const watchIntervalMs = 1000;
const startConcurrency = 32;
const actionsQueue = 'gate-actions';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** What `uptime` says of the machine: its load average over 1, 5 and 15 minutes. */
const uptime = (): string =>
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')}`;

type KeyKind = 'admin' | 'function';

interface Env {
  readonly host: BenchHost;
  /** State reads the app's watch hub has made (devhost in this process only). */
  readonly hubReads: (() => number) | undefined;
  /** Storage requests per second with nothing going on. */
  floorPerSecond: number;
  floorExecutionsPerSecond: number;
  floorMessagesPerSecond: number;
}

function headersFor(env: Env, key: KeyKind): Record<string, string> {
  const value = env.host.keys[key];
  return value === undefined ? {} : { 'x-functions-key': value };
}

async function call<T>(
  env: Env,
  method: string,
  path: string,
  body?: unknown,
  key: KeyKind = 'function',
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${env.host.baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headersFor(env, key) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

interface GateView {
  state: string;
  waiters: { waiting: number; registered: number; late: number; proceeded: number };
}

/** A run's status as either design answers it: `{state, proceededAt}` or Durable's `{runtimeStatus, output}`. */
interface RunView {
  state?: string;
  proceededAt?: string | null;
  runtimeStatus?: string;
  output?: { proceededAt?: string } | null;
}

function proceededAt(run: RunView): number | undefined {
  const at = run.proceededAt ?? (run.runtimeStatus === 'Completed' ? run.output?.proceededAt : undefined);
  return at === undefined || at === null ? undefined : Date.parse(at);
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 900_000, everyMs = 250): Promise<void> {
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

const gateOf = (env: Env, gate: string) => call<GateView>(env, 'GET', `/api/gates/${gate}`);

async function createGate(env: Env, gate: string): Promise<void> {
  const res = await call(env, 'PUT', `/api/gates/${gate}`, undefined, 'admin');
  if (res.status !== 201) throw new Error(`creating ${gate} answered ${res.status}: ${JSON.stringify(res.body)}`);
}

async function release(env: Env, gate: string): Promise<{ t0: number; ms: number }> {
  const t0 = Date.now();
  const started = performance.now();
  const res = await call(env, 'POST', `/api/gates/${gate}/release`, { by: 'bench' }, 'admin');
  if (res.status !== 200) throw new Error(`release answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { t0, ms: performance.now() - started };
}

/** Counting over a phase: the work done and the wall time. */
interface PhaseCost {
  readonly work: WorkCount;
  readonly seconds: number;
}

function measureFrom(env: Env): () => PhaseCost {
  const before = env.host.totals();
  const t = performance.now();
  return () => ({ work: workBetween(before, env.host.totals()), seconds: (performance.now() - t) / 1000 });
}

interface PerRun {
  readonly storage: number;
  readonly messages: number | undefined;
  readonly executions: number | undefined;
}

/** A phase's work per run, net of the host's idle floor over the phase's duration. */
function perRun(env: Env, cost: PhaseCost, n: number): PerRun | undefined {
  if (!env.host.counted) return undefined;
  const net = (value: number, floor: number): number => Math.max(0, value - floor * cost.seconds) / n;
  return {
    storage: net(cost.work.storage, env.floorPerSecond),
    messages: cost.work.durableMessages === undefined ? undefined : net(cost.work.durableMessages, env.floorMessagesPerSecond),
    executions: cost.work.durableExecutions === undefined ? undefined : net(cost.work.durableExecutions, env.floorExecutionsPerSecond),
  };
}

/** Waits until the host is back at its idle floor (at most twice the floor rate for 2 s), at most `maxMs`. */
/**
 * Until the gate's release orchestration has finished (its sweep comes after a grace), so the release's
 * cost includes it. Through the Durable HTTP API, which both started hosts serve.
 */
async function releaseFinished(env: Env, gate: string): Promise<void> {
  const path = `/runtime/webhooks/durabletask/instances/${encodeURIComponent(`gate:${gate}:release:1`)}`;
  await until(
    `the release orchestration of ${gate}`,
    async () => {
      const res = await call<{ runtimeStatus?: string }>(env, 'GET', path, undefined, 'admin');
      if (res.status === 404) return true;
      return res.body.runtimeStatus === 'Completed' || res.body.runtimeStatus === 'Failed';
    },
    600_000,
    1000,
  );
}

async function settle(env: Env, maxMs = 60_000): Promise<void> {
  if (!env.host.counted) return;
  const deadline = Date.now() + maxMs;
  let quiet = 0;
  let last = env.host.totals().storage;
  while (Date.now() < deadline && quiet < 2) {
    await sleep(1000);
    const now = env.host.totals().storage;
    quiet = now - last <= Math.max(4, env.floorPerSecond * 2) ? quiet + 1 : 0;
    last = now;
  }
}

/**
 * The CPU each process of the run uses from now until the returned function is called, per action:
 * the host's processes (the real host's .NET process and its Node worker), Azurite, and this one
 * (the counting proxy and the consumer, and the baseline's sends). Where a release's time goes on a
 * machine of two cores.
 */
function cpuPerAction(env: Env): (n: number) => string {
  const label = (pid: number): string => {
    let line = '';
    try {
      line = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return 'gone';
    }
    if (pid === process.pid) return env.host.kind === 'devhost' ? 'bench (the devhost, proxy, consumer)' : 'bench (proxy, consumer)';
    if (line.includes('nodejsWorker')) return 'worker';
    if (line.includes('azurite')) return 'azurite';
    return 'host';
  };
  const storage = env.host.storageProcessId === undefined ? [] : [env.host.storageProcessId];
  const pids = [...new Set([...env.host.processIds(), ...storage, process.pid])];
  const before = new Map(pids.map((pid) => [pid, processCpuMs(pid)]));
  return (n) => {
    const used = new Map<string, number>();
    for (const [pid, at] of before) {
      const name = label(pid);
      used.set(name, (used.get(name) ?? 0) + (processCpuMs(pid) - at));
    }
    return [...used].map(([name, ms]) => `${name} ${(ms / n).toFixed(2)}`).join(', ');
  };
}

interface Measured {
  readonly latency: Latency;
  readonly releaseCallMs?: number;
  readonly storagePerMin?: number;
  readonly readsPerMin?: number;
  readonly start?: PerRun;
  readonly releaseCost?: PerRun;
  readonly startSeconds?: number;
  readonly lastSeconds?: number;
  readonly note: string;
  readonly topResources?: string;
}

/** Idle cost while `n` wait: storage requests and state reads per minute over the window. */
async function idleWindow(env: Env, reads: () => number): Promise<{ storagePerMin: number; readsPerMin: number }> {
  const reads0 = reads();
  const done = measureFrom(env);
  await sleep(idleWindowMs);
  const cost = done();
  const perMin = 60_000 / idleWindowMs;
  return { storagePerMin: cost.work.storage * perMin, readsPerMin: (reads() - reads0) * perMin };
}

/** Starts `n` runs (ids chosen by the app, as without `runId` a start is the cheapest) and waits until all wait. */
async function startRuns(env: Env, gate: string, n: number, action: unknown): Promise<{ cost: PhaseCost; ids: string[]; seconds: number }> {
  const ids: string[] = [];
  const done = measureFrom(env);
  const t = performance.now();
  await pool(n, startConcurrency, async () => {
    const res = await call<{ runId: string }>(env, 'POST', `/api/gates/${gate}/runs`, { action });
    if (res.status !== 202) throw new Error(`starting a run answered ${res.status}: ${JSON.stringify(res.body)}`);
    ids.push(res.body.runId);
  });
  await until(`${n} runs waiting`, async () => (await gateOf(env, gate)).body.waiters.waiting >= n);
  const seconds = (performance.now() - t) / 1000;
  await settle(env);
  return { cost: done(), ids, seconds };
}

function topResources(work: WorkCount, n: number): string {
  return [...work.byResource.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([k, v]) => `${k} ${(v / n).toFixed(2)}`)
    .join(', ');
}

/** Each run's status through its route; a 503 is retried after a moment, as a client would, and counted. */
async function runStatuses(env: Env, gate: string, ids: readonly string[]): Promise<RunView[]> {
  const out: RunView[] = [];
  // Reading them is the benchmark's check, not the release: fewer at once for big N, so Azurite keeps up.
  await pool(ids.length, ids.length > 2000 ? 8 : startConcurrency, async (i) => {
    for (let attempt = 0; ; attempt++) {
      const res = await call<RunView>(env, 'GET', `/api/gates/${gate}/runs/${ids[i] ?? ''}`);
      if (res.status === 200) {
        out.push(res.body);
        return;
      }
      if (res.status !== 503 || attempt >= 5) throw new Error(`run status answered ${res.status}: ${JSON.stringify(res.body)}`);
      unavailableAnswers++;
      await sleep(1000);
    }
  });
  return out;
}

/** 503s the benchmark's own status reads were answered with (and retried). */
let unavailableAnswers = 0;

async function plainRuns(env: Env, n: number): Promise<Measured> {
  const gate = `bench-runs-${n}-${Date.now()}`;
  await createGate(env, gate);
  const { cost: start, ids, seconds: startSeconds } = await startRuns(env, gate, n, { type: 'none' });
  const idle = await idleWindow(env, () => 0);
  const done = measureFrom(env);
  const { t0, ms } = await release(env, gate);
  // The gate's own count while the release spreads (cheap), then the runs' statuses, outside the count.
  await until(`${n} runs proceeded`, async () => (await gateOf(env, gate)).body.waiters.proceeded >= n);
  await settle(env);
  const releaseCost = done();
  let statuses: RunView[] = [];
  await until(`${n} runs completed`, async () => {
    statuses = await runStatuses(env, gate, ids);
    return statuses.every((s) => proceededAt(s) !== undefined);
  });
  const latency = new Latency();
  for (const s of statuses) latency.recordMs((proceededAt(s) ?? NaN) - t0);
  return {
    latency,
    ...idle,
    releaseCallMs: ms,
    start: perRun(env, start, n),
    releaseCost: perRun(env, releaseCost, n),
    startSeconds,
    lastSeconds: latency.maxMs / 1000,
    note: 'status route proceededAt',
    topResources: `start: ${topResources(start.work, n)}; release: ${topResources(releaseCost.work, n)}`,
  };
}

/** Receives the `enqueue` actions of one gate from the queue, noting when each run's message arrived. */
class ActionConsumer {
  readonly seen = new Map<string, number>();
  private stopped = false;
  private readonly loops: Promise<void>[] = [];

  constructor(
    private readonly queue: QueueClient,
    private readonly gate: string,
  ) {}

  start(receivers = 4): void {
    for (let i = 0; i < receivers; i++) this.loops.push(this.loop());
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const got = await this.queue.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 3600 });
      const now = Date.now();
      if (got.receivedMessageItems.length === 0) {
        await sleep(20);
        continue;
      }
      // Not deleted (the queue is cleared before each phase): a worker's delete would double the queue's load.
      for (const m of got.receivedMessageItems) {
        const body = JSON.parse(Buffer.from(m.messageText, 'base64').toString('utf8')) as { gate: string; runId: string };
        if (body.gate === this.gate && !this.seen.has(body.runId)) this.seen.set(body.runId, now);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }
}

async function actionQueue(env: Env): Promise<QueueClient> {
  const connection = env.host.storageConnection;
  if (connection === undefined) throw new Error('The action benchmark reads the gate-actions queue: it needs a host it started');
  const queue = new QueueClient(connection, actionsQueue);
  await queue.createIfNotExists();
  await queue.clearMessages();
  return queue;
}

async function actionRuns(env: Env, n: number, during?: (inFlight: () => boolean) => Promise<void>): Promise<Measured> {
  const gate = `bench-actions-${n}-${Date.now()}`;
  await createGate(env, gate);
  const queue = await actionQueue(env);
  const { cost: start, seconds: startSeconds } = await startRuns(env, gate, n, { type: 'enqueue', payload: { bench: true } });
  const consumer = new ActionConsumer(queue, gate);
  consumer.start();
  const done = measureFrom(env);
  const cpu = cpuPerAction(env);
  const { t0, ms } = await release(env, gate);
  let finished = false;
  const side = during?.(() => !finished);
  await until(`${n} action messages`, () => Promise.resolve(consumer.seen.size >= n), 900_000, 20);
  finished = true;
  const lastSeen = Date.now() - t0;
  const cpuUsed = cpu(n);
  await side;
  await consumer.stop();
  await releaseFinished(env, gate);
  await settle(env);
  // GATES_BENCH_HOST_LOG: where to keep the host's output, to read a release closely.
  if ((process.env.GATES_BENCH_HOST_LOG ?? '') !== '') writeFileSync(process.env.GATES_BENCH_HOST_LOG ?? '', env.host.output());
  // After the host went quiet: a fan-out logs once its last outcomes are recorded.
  console.log(`  ${n} enqueue runs: ${batchBreakdown(env.host.output(), gate, t0) ?? "no action batch logged in the host's output"}`);
  console.log(`  ${n} enqueue runs, CPU ms per action from the release call to the last message seen: ${cpuUsed}`);
  const releaseCost = done();
  const latency = new Latency();
  for (const at of consumer.seen.values()) latency.recordMs(at - t0);
  return {
    latency,
    releaseCallMs: ms,
    start: perRun(env, start, n),
    releaseCost: perRun(env, releaseCost, n),
    startSeconds,
    lastSeconds: lastSeen / 1000,
    note: 'message received from gate-actions',
    topResources: `start: ${topResources(start.work, n)}; release: ${topResources(releaseCost.work, n)}`,
  };
}

/**
 * The floor of the enqueue design on this machine, measured in the same run: `n` messages put on the
 * queue at once by this process (as many at a time as a release's fan-out, 128), the way the host
 * reaches storage (the counting proxy, or Azurite itself with BENCH_STORAGE=direct), received by the
 * same consumer.
 */
async function rawQueueBaseline(env: Env, n: number): Promise<Measured> {
  const gate = `bench-rawqueue-${n}-${Date.now()}`;
  const queue = await actionQueue(env);
  const connection = env.host.hostStorageConnection;
  if (connection === undefined) throw new Error('The queue baseline needs a host this benchmark started');
  const sender = new QueueClient(connection, actionsQueue);
  const consumer = new ActionConsumer(queue, gate);
  consumer.start();
  const cpu = cpuPerAction(env);
  const t0 = Date.now();
  await pool(n, 128, async (i) => {
    await sender.sendMessage(
      Buffer.from(JSON.stringify({ gate, generation: 1, runId: `r${i}`, payload: { bench: true } })).toString('base64'),
    );
  });
  await until(`${n} baseline messages`, () => Promise.resolve(consumer.seen.size >= n), 900_000, 20);
  const lastSeen = Date.now() - t0;
  console.log(`  ${n} sends straight to the queue, CPU ms per message from the first send to the last seen: ${cpu(n)}`);
  await consumer.stop();
  const latency = new Latency();
  for (const at of consumer.seen.values()) latency.recordMs(at - t0);
  return { latency, lastSeconds: lastSeen / 1000, note: `${n} sends straight to the queue, 128 at a time` };
}

/** One release's p99 and the queue alone's, back to back (ms). */
interface Pair {
  readonly actions: number;
  readonly rawQueue: number;
}

/** The first pair (measured above) and `pairsPerSize - 1` more, every other one with the queue alone first. */
async function morePairs(env: Env, n: number, first: { actions: Measured; rawQueue: Measured }): Promise<Pair[]> {
  const p99 = (m: Measured): number => m.latency.percentileMs(99);
  const pairs: Pair[] = [{ actions: p99(first.actions), rawQueue: p99(first.rawQueue) }];
  for (let i = 1; i < pairsPerSize; i++) {
    console.log(`  pair ${i + 1} of ${pairsPerSize}${i % 2 === 1 ? ', the queue alone first' : ''}; uptime: ${uptime()}`);
    const raw = i % 2 === 1 ? await rawQueueBaseline(env, n) : undefined;
    const actions = await actionRuns(env, n);
    const rawQueue = raw ?? (await rawQueueBaseline(env, n));
    pairs.push({ actions: p99(actions), rawQueue: p99(rawQueue) });
  }
  return pairs;
}

/** Each pair's p99s, and the median of their ratios against the target. */
function pairsReport(n: number, pairs: readonly Pair[]): void {
  const howMany = `${pairs.length} pair${pairs.length === 1 ? '' : 's'}`;
  table(
    `p99 of ${n} enqueue runs and of the queue alone, ${howMany} back to back`,
    pairs.map((p, i) => ({
      pair: String(i + 1),
      'enqueue runs p99 ms': p.actions,
      'queue alone p99 ms': p.rawQueue,
      ratio: p.actions / p.rawQueue,
    })),
  );
  pairedRatio(
    `p99, ${n} enqueue runs vs the queue alone`,
    pairs.map((p) => ({ value: p.actions, baseline: p.rawQueue })),
    { atMost: 1.5 },
  );
  const within = pairs.filter((p) => p.actions <= 2000).length;
  console.log(
    `  p99 of ${n} enqueue runs, median of ${howMany}: ${median(pairs.map((p) => p.actions)).toFixed(0)} ms; ≤ 2,000 ms in ${within} of ${pairs.length}`,
  );
}

async function longPollClients(env: Env, n: number): Promise<Measured> {
  const gate = `bench-wait-${n}-${Date.now()}`;
  await createGate(env, gate);
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
  const idle = await idleWindow(env, env.hubReads ?? (() => NaN));
  const { t0, ms } = await release(env, gate);
  await Promise.all(clients);
  const latency = new Latency();
  for (const at of seen) latency.recordMs(at - t0);
  return { latency, ...idle, releaseCallMs: ms, note: `watch hub, ${watchIntervalMs} ms reads` };
}

async function sseClients(env: Env, n: number): Promise<Measured> {
  const gate = `bench-sse-${n}-${Date.now()}`;
  await createGate(env, gate);
  const seen: number[] = [];
  let connected = 0;
  const clients = Array.from({ length: n }, async () => {
    const controller = new AbortController();
    const res = await fetch(`${env.host.baseUrl}/api/gates/${gate}/events`, {
      signal: controller.signal,
      headers: headersFor(env, 'function'),
    });
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
  await createGate(env, gate);
  let polls = 0;
  let stop = false;
  const seen: number[] = [];
  const clients = Array.from({ length: n }, async () => {
    let etag: string | null = null;
    await sleep(Math.random() * pollIntervalMs);
    while (!stop) {
      polls++;
      const headers: Record<string, string> = { ...headersFor(env, 'function'), ...(etag === null ? {} : { 'if-none-match': etag }) };
      const res: Response = await fetch(`${env.host.baseUrl}/api/gates/${gate}`, { headers });
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

/**
 * Another gate's create, read and release, again and again while `inFlight()`; each call timed. Each
 * answers once its change is written (never 202), so any other status is a failure.
 */
async function otherGateCalls(
  env: Env,
  inFlight: () => boolean,
): Promise<{ create: Latency; read: Latency; release: Latency; rounds: number }> {
  const out = { create: new Latency(), read: new Latency(), release: new Latency(), rounds: 0 };
  const timed = async (latency: Latency, what: () => Promise<{ status: number; body: unknown }>, ok: number[]): Promise<void> => {
    const t = performance.now();
    const res = await what();
    latency.recordMs(performance.now() - t);
    if (!ok.includes(res.status)) throw new Error(`a concurrent gate call answered ${res.status}: ${JSON.stringify(res)}`);
  };
  await sleep(50);
  while (inFlight()) {
    const gate = `bench-other-${Date.now()}-${out.rounds}`;
    await timed(out.create, () => call(env, 'PUT', `/api/gates/${gate}`, undefined, 'admin'), [201]);
    await timed(out.read, () => gateOf(env, gate), [200]);
    await timed(out.release, () => call(env, 'POST', `/api/gates/${gate}/release`, { by: 'bench' }, 'admin'), [200]);
    out.rounds++;
  }
  return out;
}

function row(design: string, n: number, m: Measured): Row {
  const s = m.latency.summary();
  const cost = (p: PerRun | undefined, pick: (p: PerRun) => number | undefined): string => {
    const v = p === undefined ? undefined : pick(p);
    return v === undefined ? '–' : v.toFixed(2);
  };
  return {
    design,
    waiters: String(n),
    'release call ms': m.releaseCallMs ?? '–',
    'p50 ms': s.p50,
    'p99 ms': s.p99,
    'max ms': s.max,
    'last seen s': m.lastSeconds === undefined ? '–' : m.lastSeconds.toFixed(1),
    'start s': m.startSeconds === undefined ? '–' : m.startSeconds.toFixed(1),
    'start tx/run': cost(m.start, (p) => p.storage),
    'start DF msgs/run': cost(m.start, (p) => p.messages),
    'start DF execs/run': cost(m.start, (p) => p.executions),
    'release tx/run': cost(m.releaseCost, (p) => p.storage),
    'release DF msgs/run': cost(m.releaseCost, (p) => p.messages),
    'release DF execs/run': cost(m.releaseCost, (p) => p.executions),
    'idle state reads/min': m.readsPerMin === undefined ? '–' : m.readsPerMin,
    'idle storage req/min': m.storagePerMin === undefined ? '–' : m.storagePerMin,
    how: m.note,
  };
}

async function measureFloor(env: Env): Promise<void> {
  if (!env.host.counted) return;
  const done = measureFrom(env);
  await sleep(idleWindowMs);
  const cost = done();
  env.floorPerSecond = cost.work.storage / cost.seconds;
  env.floorMessagesPerSecond = (cost.work.durableMessages ?? 0) / cost.seconds;
  env.floorExecutionsPerSecond = (cost.work.durableExecutions ?? 0) / cost.seconds;
  console.log(
    `Idle floor: ${(env.floorPerSecond * 60).toFixed(0)} storage requests/min, ${(env.floorMessagesPerSecond * 60).toFixed(1)} Durable messages/min, ` +
      `${(env.floorExecutionsPerSecond * 60).toFixed(1)} Durable executions/min with nothing waiting (the host's listeners)`,
  );
}

async function main(): Promise<void> {
  header('gates');
  const storage = storageDirect() ? 'to Azurite directly (BENCH_STORAGE=direct), not counted' : 'through the counting proxy';
  console.log(`host: ${benchHostKind()}; storage: ${storage}; action warm-up: ${warmUp} runs; uptime: ${uptime()}`);
  const hub = `benchgates${Date.now() % 100000}`;
  const host = await startBenchHost({
    env: {
      FUNCTIONS_WORKER_RUNTIME: 'node',
      TALLYHO_TASK_HUB: hub,
      AzureFunctionsJobHost__extensions__durableTask__hubName: hub,
      TALLYHO_GATES_WATCH_INTERVAL_MS: String(watchIntervalMs),
      // The bench is one caller, which may hold a quarter of a generation (docs/security.md, "Fair shares").
      TALLYHO_GATES_MAX_WAITERS: String((Math.max(...sizes) * 2 + 1000) * 4),
    },
  });
  // The devhost in this process loaded the app afresh: take the watch hub from the app its copy of functions/_app built.
  const appModule = await host.appModule<{ theApp?: () => { gates: { hub: { stats(): { reads: number } } } } }>('functions/_app.js');
  const theApp = appModule?.theApp;
  const env: Env = {
    host,
    hubReads: theApp === undefined ? undefined : () => theApp().gates.hub.stats().reads,
    floorPerSecond: 0,
    floorExecutionsPerSecond: 0,
    floorMessagesPerSecond: 0,
  };
  const rows: Row[] = [];
  const concurrentRows: Row[] = [];
  try {
    // Warm-up: load every code path once.
    await plainRuns(env, 5);
    if (designs.has('actions') || designs.has('concurrent')) await actionRuns(env, warmUp);
    if (designs.has('actions') && env.host.storageConnection !== undefined) await rawQueueBaseline(env, warmUp);
    await longPollClients(env, 5);
    await measureFloor(env);
    for (const n of sizes) {
      console.log(`N = ${n}; uptime: ${uptime()}`);
      const baseline = designs.has('poll') ? await pollingBaseline(env, n) : undefined;
      const runs = designs.has('runs') ? await plainRuns(env, n) : undefined;
      const actions = designs.has('actions') ? await actionRuns(env, n) : undefined;
      const rawQueue = designs.has('actions') && env.host.storageConnection !== undefined ? await rawQueueBaseline(env, n) : undefined;
      const pairs = actions !== undefined && rawQueue !== undefined ? await morePairs(env, n, { actions, rawQueue }) : [];
      const polls = designs.has('longpoll') ? await longPollClients(env, n) : undefined;
      const streams = designs.has('sse') ? await sseClients(env, n) : undefined;
      if (runs !== undefined) rows.push(row('gated runs, no action', n, runs));
      if (actions !== undefined) rows.push(row('gated runs, enqueue action', n, actions));
      if (rawQueue !== undefined) rows.push(row('baseline: the queue alone', n, rawQueue));
      if (polls !== undefined) rows.push(row('long-poll clients', n, polls));
      if (streams !== undefined) rows.push(row('SSE clients', n, streams));
      if (baseline !== undefined) rows.push(row('baseline: polling 2.5 s', n, baseline));
      for (const m of [runs, actions])
        if (m?.topResources !== undefined) console.log(`storage requests per run by resource (raw), N=${n}: ${m.topResources}`);
      if (pairs.length > 0) pairsReport(n, pairs);
      if (baseline !== undefined) {
        const base = baseline.latency.percentileMs(99);
        if (runs !== undefined)
          ratio(`p99 release latency, ${n} gated runs vs polling`, runs.latency.percentileMs(99), base, { atMost: 1 });
        if (actions !== undefined)
          ratio(`p99 release latency, ${n} enqueue runs vs polling`, actions.latency.percentileMs(99), base, { atMost: 1 });
        if (polls !== undefined)
          ratio(`p99 release latency, ${n} long-poll clients vs polling`, polls.latency.percentileMs(99), base, { atMost: 1 });
        if (streams !== undefined)
          ratio(`p99 release latency, ${n} SSE clients vs polling`, streams.latency.percentileMs(99), base, { atMost: 1 });
        if (polls?.readsPerMin !== undefined && baseline.readsPerMin !== undefined && env.hubReads !== undefined)
          ratio(`idle state reads/min, ${n} watchers (long-poll) vs polling`, polls.readsPerMin, baseline.readsPerMin, { atMost: 1 });
      }
      if (n === 1000) {
        for (const [name, m] of [
          ['gated runs', runs],
          ['enqueue runs', actions],
        ] as const) {
          if (m === undefined) continue;
          const p99 = name === 'enqueue runs' && pairs.length > 0 ? median(pairs.map((p) => p.actions)) : m.latency.percentileMs(99);
          console.log(
            `TARGET p99 ≤ 2,000 ms for 1,000 ${name} on the ${host.kind}: ${p99.toFixed(0)} ms — ${p99 <= 2000 ? 'met' : 'NOT met'}`,
          );
          const call = m.releaseCallMs ?? NaN;
          console.log(`TARGET release call < 1,000 ms: ${call.toFixed(0)} ms — ${call < 1000 ? 'met' : 'NOT met'}`);
        }
      }
      if (designs.has('concurrent')) {
        let other: Awaited<ReturnType<typeof otherGateCalls>> | undefined;
        const inFlight = await actionRuns(env, n, async (busy) => {
          other = await otherGateCalls(env, busy);
        });
        if (other !== undefined) {
          for (const [op, latency] of [
            ['create', other.create],
            ['read', other.read],
            ['release', other.release],
          ] as const) {
            const s = latency.summary();
            concurrentRows.push({
              'in flight': `release of ${n} enqueue runs (${inFlight.lastSeconds?.toFixed(1) ?? '?'} s)`,
              'other gate': op,
              calls: String(latency.count),
              'p50 ms': s.p50,
              'max ms': s.max,
            });
          }
          const worst = Math.max(other.create.maxMs, other.read.maxMs, other.release.maxMs);
          console.log(
            `TARGET another gate's create/read/release < 1,000 ms during a ${n}-run release: max ${worst.toFixed(0)} ms — ${worst < 1000 ? 'met' : 'NOT met'}`,
          );
        }
      }
    }
    table(`Gate release on the ${host.kind}, ${machine()}; uptime at the end: ${uptime()}`, rows);
    if (unavailableAnswers > 0) console.log(`${unavailableAnswers} run status reads answered 503 and were retried`);
    if (concurrentRows.length > 0) table(`Another gate while a release is in flight, ${host.kind}`, concurrentRows);
  } catch (err) {
    const problems = host
      .output()
      .split('\n')
      .filter((line) => /http\.unhandled|gates\.|Exception while executing/.test(line))
      .slice(-15);
    if (problems.length > 0) console.error(`The host's last problems:\n${problems.join('\n')}`);
    throw err;
  } finally {
    await host.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
