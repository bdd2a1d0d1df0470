/**
 * The TypeScript client (@tallyho/client) against one devhost on one Azurite, both started here:
 *   sequences — numbers/s through `sequence.next()` (numbers from blocks the client reserved with one
 *               `count: N` request each) against the baseline of one HTTP call per number
 *               (`POST /next` without a count), 16 concurrent callers each, same host, same run;
 *   counters  — a fixed offered load of increments to one counter (`--increments-per-s`, default
 *               6,400/s from 64 producers), through `client.increment()` (coalesced: linger 5 ms,
 *               4 requests in flight) and through one request per increment (64 connections at most;
 *               what they cannot carry is shed). After the run the counter is read (consistent) and
 *               must equal the increments that resolved;
 *   streams   — the same for appends (`--events-per-s`, default 3,200/s from 64 producers): one
 *               writer's `stream.append()` (linger 5 ms, 4 in flight, order kept) against one request
 *               per append, each producer its own.
 * The figures that carry the targets are what the host pays per increment or event: its process's
 * CPU (/proc) and the requests it serves, each design at the same offered load. They do not move
 * with the machine's speed the way a ratio of two saturated throughputs does (a starved baseline
 * made such a ratio grow on a busy machine). `--busy` runs everything beside a busy loop per core.
 * The client is the package's build (clients/typescript/dist, made by the root build).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

// The client is an ES module and this file is CommonJS: its types come in type-only, the code by import().
import type * as ClientModule from '../clients/typescript/src/index.js' with { 'resolution-mode': 'import' };
import { startAzurite } from '../devhost/azurite';
import { startBenchHost } from './support/benchHost';
import { startDevhostChild } from './support/devhostChild';
import { type LoadResult, type Meters, type OfferedLoad, runOffered } from './support/offeredLoad';
import { processCpuMs } from './support/proc';
import { fmt, header, type Row, ratio, table } from './support/report';
import { sampleSettings } from './support/settings';

const repoRoot = join(__dirname, '..', '..');
const { values: options } = parseArgs({
  options: {
    busy: { type: 'boolean', default: false },
    'increments-per-s': { type: 'string', default: '6400' },
    'events-per-s': { type: 'string', default: '3200' },
    'real-host': { type: 'boolean', default: false },
  },
});
const window = { producers: 64, seconds: 5, warmupSeconds: 1 };
const counterLoad: OfferedLoad = { ...window, rate: Number(options['increments-per-s']) };
const streamLoad: OfferedLoad = { ...window, rate: Number(options['events-per-s']) };

/** Numbers/s of `workers` loops of `op` over 3 s after a 0.5 s warm-up (the sequences phase). */
async function closedLoop(workers: number, op: () => Promise<unknown>): Promise<number> {
  const drive = async (ms: number): Promise<number> => {
    const end = performance.now() + ms;
    const counts = await Promise.all(
      Array.from({ length: workers }, async () => {
        let n = 0;
        for (; performance.now() < end; n++) await op();
        return n;
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  };
  await drive(500);
  const started = performance.now();
  return (await drive(3000)) / ((performance.now() - started) / 1000);
}

/** A busy loop per core (`--busy`): what the machine of a busy server looks like. */
function cpuHogs(): ChildProcess[] {
  if (!options.busy) return [];
  return cpus().map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

function row(design: string, unit: string, r: LoadResult): Row {
  return {
    design,
    [`${unit} offered`]: r.offered,
    done: `${fmt((100 * r.done) / r.offered, 1)}%`,
    shed: r.shed,
    failed: r.failed,
    [`requests per 1,000 ${unit}`]: (r.requests * 1000) / Math.max(1, r.done),
    [`host CPU ms per 1,000 ${unit}`]: (r.hostCpuMs * 1000) / Math.max(1, r.done),
    'p50 ms': r.latency.percentileMs(50),
    'p99 ms': r.latency.percentileMs(99),
  };
}

/** The ratios of what the host pays per unit, one request each ÷ coalesced; the targets are on these. */
function verdicts(what: string, unit: string, perUnit: LoadResult, coalesced: LoadResult): void {
  // Kept up: everything offered was done, and the last of it waited less than the window lasted
  // (a design that falls behind builds a backlog that grows through the window).
  const p99 = coalesced.latency.percentileMs(99);
  const keptUp = coalesced.done >= 0.98 * coalesced.offered && coalesced.failed === 0 && p99 < window.seconds * 1000;
  console.log(
    `${what}: the coalesced design ${keptUp ? 'kept up with' : 'fell behind'} the offered load ` +
      `(${fmt(coalesced.done, 0)} of ${fmt(coalesced.offered, 0)} ${unit}s done, p99 ${fmt(p99 / 1000, 1)} s)`,
  );
  const per = (r: LoadResult, x: number): number => x / Math.max(1, r.done);
  ratio(
    `${what}: host CPU per ${unit}, one request each ÷ coalesced`,
    per(perUnit, perUnit.hostCpuMs),
    per(coalesced, coalesced.hostCpuMs),
    {
      atLeast: 20,
    },
  );
  ratio(`${what}: requests per ${unit}, one request each ÷ coalesced`, per(perUnit, perUnit.requests), per(coalesced, coalesced.requests), {
    atLeast: 20,
  });
}

async function main(): Promise<void> {
  header('client');
  const hogs = cpuHogs();
  console.log(
    `${options.busy ? `beside ${hogs.length} busy loops (one per core)` : 'no load added'}; load average at start ${loadavg()
      .map((l) => fmt(l, 1))
      .join(' ')}; host: ${options['real-host'] ? 'the real Functions host (4.1037.0)' : 'the devhost'}`,
  );
  const { TallyhoClient } = (await import(
    pathToFileURL(join(repoRoot, 'clients', 'typescript', 'dist', 'index.js')).href
  )) as typeof ClientModule;
  const host = await startHost();
  try {
    const api = `${host.baseUrl}/api`;
    let sent = 0;
    const counted = (input: string, init: RequestInit): Promise<Response> => {
      sent++;
      return fetch(input, init);
    };
    const meters: Meters = { requests: () => sent, hostCpuMs: host.cpuMs };
    const keys = { functionKey: host.keys.function, adminKey: host.keys.admin };
    const client = new TallyhoClient({ baseUrl: api, fetch: counted, ...keys });
    const post = async (path: string, body: unknown): Promise<void> => {
      const res = await counted(`${api}/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(keys.functionKey === undefined ? {} : { 'x-functions-key': keys.functionKey }) },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`POST ${path} answered ${res.status}`);
      await res.arrayBuffer();
    };

    const sequenceName = `bench-${Date.now()}`;
    await client.sequences.configure(sequenceName, { prefix: 'B-', width: 9, checkDigit: true, blockSize: { min: 100, max: 100_000 } });
    const perCall = await closedLoop(16, () => post(`sequences/${sequenceName}/next`, {}));
    const sequence = client.sequence(sequenceName);
    const blocks = await closedLoop(16, () => sequence.next());
    table('Numbers, 16 callers each awaiting its number, 3 s after 0.5 s', [
      { design: 'one HTTP call per number (baseline)', 'numbers/s': perCall },
      { design: 'client next() from reserved blocks', 'numbers/s': blocks },
    ]);
    ratio('sequences: client next() ÷ one call per number (numbers/s)', blocks, perCall, { atLeast: 50 });

    const counterName = `bench-${Date.now()}`;
    await client.counters.configure(counterName, { mode: 'hits', partitions: 4 });
    let resolved = 0;
    const perIncrement = await runOffered(
      counterLoad,
      () => post(`counters/${counterName}/increment`, { by: 1 }).then(() => void resolved++),
      meters,
      window.producers,
    );
    const designs = [
      { name: 'client increment(), linger 0 (end of turn), 4 in flight', options: { lingerMs: 0 } },
      { name: 'client increment(), linger 5 ms, 4 in flight (default)', options: {} },
    ];
    const coalescedRuns: { name: string; result: LoadResult }[] = [];
    for (const d of designs) {
      const c = new TallyhoClient({ baseUrl: api, fetch: counted, ...keys, counters: d.options });
      coalescedRuns.push({
        name: d.name,
        result: await runOffered(counterLoad, () => c.increment(counterName).then(() => void resolved++), meters),
      });
      await c.close();
    }
    const stored = await client.counters.get(counterName, { consistent: true });
    table(
      `Increments to one counter (hits, 4 partitions): ${fmt(counterLoad.rate, 0)}/s offered by ${counterLoad.producers} producers, ${counterLoad.seconds} s after ${counterLoad.warmupSeconds} s`,
      [
        row('one request per increment, 64 connections (baseline)', 'increments', perIncrement),
        ...coalescedRuns.map((r) => row(r.name, 'increments', r.result)),
      ],
    );
    console.log(`counter value after the run: ${fmt(stored.value, 0)}; increments that resolved: ${fmt(resolved, 0)}`);
    if (stored.value !== resolved) throw new Error(`the counter holds ${stored.value}, not the ${resolved} increments that resolved`);
    verdicts('counters', 'increment', perIncrement, coalescedRuns.at(-1)?.result as LoadResult);

    const eventType = `bench-${Date.now()}`;
    const seqs = Array.from({ length: window.producers }, () => 0);
    const perAppend = await runOffered(
      streamLoad,
      (w) => {
        seqs[w] = (seqs[w] ?? 0) + 1;
        return post(`streams/${eventType}/events`, { events: [{ producer: `bench-${w}`, seq: seqs[w], data: { w } }] });
      },
      meters,
      window.producers,
    );
    const streamDesigns = [
      { name: 'stream append(), linger 0, 1 in flight (the earlier client)', options: { lingerMs: 0, maxInFlight: 1 } },
      { name: 'stream append(), linger 5 ms, 4 in flight (default)', options: {} },
    ];
    const appendRuns: { name: string; result: LoadResult }[] = [];
    for (const d of streamDesigns) {
      const stream = client.stream(eventType, { producer: `bench-client-${appendRuns.length}`, ...d.options });
      appendRuns.push({ name: d.name, result: await runOffered(streamLoad, () => stream.append({ n: 1 }).then(() => undefined), meters) });
      await stream.close();
    }
    table(
      `Appends to one event type: ${fmt(streamLoad.rate, 0)}/s offered by ${streamLoad.producers} producers, ${streamLoad.seconds} s after ${streamLoad.warmupSeconds} s (ack: buffered)`,
      [
        row('one request per append, 64 producers, 64 connections (baseline)', 'events', perAppend),
        ...appendRuns.map((r) => row(r.name, 'events', r.result)),
      ],
    );
    verdicts('streams', 'event', perAppend, appendRuns.at(-1)?.result as LoadResult);
    await client.close();
  } finally {
    await host.stop();
    for (const hog of hogs) hog.kill('SIGKILL');
  }
}

interface Host {
  readonly baseUrl: string;
  readonly keys: { readonly function?: string; readonly admin?: string };
  /** CPU the serving processes have used so far, in ms. */
  cpuMs(): number;
  stop(): Promise<void>;
}

/** The devhost in a process of its own on a fresh Azurite, or with `--real-host` the real Functions host (bench/support/benchHost.ts). */
async function startHost(): Promise<Host> {
  if (options['real-host']) {
    const real = await startBenchHost({ env: sampleSettings() });
    return {
      baseUrl: real.baseUrl,
      keys: real.keys,
      cpuMs: () => real.processIds().reduce((sum, pid) => sum + processCpuMs(pid), 0),
      stop: () => real.stop(),
    };
  }
  const azurite = await startAzurite();
  const devhost = await startDevhostChild({ ...sampleSettings(), AzureWebJobsStorage: azurite.connectionString });
  return {
    baseUrl: devhost.baseUrl,
    keys: {},
    cpuMs: () => processCpuMs(devhost.pid),
    stop: async () => {
      await devhost.stop();
      await azurite.stop();
    },
  };
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
