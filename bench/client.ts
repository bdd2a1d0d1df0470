/**
 * The TypeScript client (@tallyho/client) against one host, started here (the devhost; the real
 * Functions host with `--real-host`), on Azurite behind a counting proxy:
 *   sequences — numbers/s through `sequence.next()` (numbers from blocks the client reserved with one
 *               `count: N` request each) against one HTTP call per number, 16 callers each;
 *   counters  — increments to one counter through `client.increment()` (coalesced), driven by a fixed
 *               offered load (`--increments-per-s=N`, default 6,400/s from 64 producers, open loop),
 *               against the baseline of one request per increment from 4 callers in closed loops
 *               (`--baseline-callers=N`; each awaits its answer, so nothing is ever shed or queued
 *               behind a saturated host). The counter is read back (consistent) and must equal the
 *               increments that resolved;
 *   streams   — the same for appends (`--events-per-s=N`, default 3,200/s): one writer's `append()`
 *               (order kept) against one request per append, each baseline caller its own producer.
 * The targets are on what the host pays per operation: its processes' CPU (/proc) net of what they
 * use idle (measured in the same run), besides the requests and storage requests per operation. The
 * baseline pays per request what one request costs on that machine, however slow; the coalesced
 * design at a fixed rate sends at most a request per linger, fewer when the host answers slower than
 * its slots turn over, so the bench prints the batch it saw against the linger's floor (and, for
 * increments, the ratio at that floor). A ratio of two saturated throughputs measured the machine
 * instead (docs/performance.md). `--busy` adds a busy loop per core. The client is the package's
 * build (clients/typescript/dist, made by the root build).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

// The client is an ES module and this file is CommonJS: its types come in type-only, the code by import().
import type * as ClientModule from '../clients/typescript/src/index.js' with { 'resolution-mode': 'import' };
import { startClientBenchHost } from './support/clientHost';
import { idleCpuMsPerSecond, type LoadResult, type Meters, type OfferedLoad, runClosed, runOffered } from './support/offeredLoad';
import { fmt, header, type Row, ratio, table } from './support/report';

const repoRoot = join(__dirname, '..', '..');
const { values: options } = parseArgs({
  options: {
    busy: { type: 'boolean', default: false },
    'increments-per-s': { type: 'string', default: '6400' },
    'events-per-s': { type: 'string', default: '3200' },
    'real-host': { type: 'boolean', default: false },
    'baseline-callers': { type: 'string', default: '4' },
  },
});
const window = { seconds: 5, warmupSeconds: 1 };
const producers = 64;
/** The baseline's callers: as many requests at once as the coalesced designs keep in flight by default. */
const baselineCallers = Number(options['baseline-callers']);
const counterLoad: OfferedLoad = { ...window, producers, rate: Number(options['increments-per-s']) };
const streamLoad: OfferedLoad = { ...window, producers, rate: Number(options['events-per-s']) };

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

const load = (): string =>
  loadavg()
    .map((l) => fmt(l, 1))
    .join(' ');

/** What the host paid per 1,000 operations, its CPU net of what it uses idle over as long. */
function perThousand(r: LoadResult, idleMsPerS: number) {
  const per = (x: number): number => (x * 1000) / Math.max(1, r.done);
  return {
    requests: per(r.requests),
    storage: per(r.storage),
    cpu: per(r.hostCpuMs),
    netCpu: per(Math.max(0, r.hostCpuMs - idleMsPerS * r.seconds)),
  };
}

function row(design: string, unit: string, r: LoadResult, idleMsPerS: number): Row {
  const p = perThousand(r, idleMsPerS);
  return {
    design,
    done: r.done,
    [`${unit}/s`]: r.done / r.seconds,
    failed: r.failed,
    'requests /1k': p.requests,
    ...(unit === 'events' ? { 'events sent /1k': (r.eventsSent * 1000) / Math.max(1, r.done) } : {}),
    'storage requests /1k': p.storage,
    'host CPU ms /1k': p.cpu,
    'net of idle': p.netCpu,
    'p50 ms': r.latency.percentileMs(50),
    'p99 ms': r.latency.percentileMs(99),
  };
}

/** The clients' default linger (ms) and requests in flight: the designs called "defaults" below. */
const defaultLinger = { ms: 5, inFlight: 4 };

/**
 * How many operations a default request carried, against the λ × linger the linger alone gives at
 * this rate (a host answering within in-flight × linger); more means every slot was taken and the
 * waiting batch grew, as it does on a slower host. For increments a request costs the host about the
 * same whatever its `by`, so the ratio at that floor is λ × linger × (a one-increment request's CPU ÷
 * a coalesced request's CPU): what a fast host would show, printed beside what this one did.
 */
function batching(what: string, unit: string, rate: number, perUnit: LoadResult, coalesced: LoadResult, idleMsPerS: number): void {
  const carried = coalesced.done / Math.max(1, coalesced.requests);
  const floor = (rate * defaultLinger.ms) / 1000;
  console.log(
    `${what}: a request carried ${fmt(carried, 1)} ${unit}s; the ${defaultLinger.ms} ms linger alone gives ${fmt(floor, 1)} at ${fmt(rate, 0)}/s` +
      (carried > 1.5 * floor
        ? ` (this host answered slower than ${defaultLinger.inFlight} × ${defaultLinger.ms} ms: batches grew while the slots were full)`
        : ''),
  );
  if (unit !== 'increment') return;
  const perRequest = (r: LoadResult): number => Math.max(0, r.hostCpuMs - idleMsPerS * r.seconds) / Math.max(1, r.requests);
  ratio(
    `${what}: host CPU per ${unit} at the linger's floor (${fmt(floor, 0)} a request), one request each ÷ coalesced`,
    floor * perRequest(perUnit),
    perRequest(coalesced),
    {
      atLeast: 20,
    },
  );
}

/** One request each ÷ coalesced, per operation; the target is on the host's CPU net of idle. */
function verdicts(what: string, unit: string, perUnit: LoadResult, coalesced: LoadResult, idleMsPerS: number): void {
  // Kept up: everything offered was done, and the last of it waited less than the window lasted
  // (a design that falls behind builds a backlog that grows through the window, and its batches grow).
  const p99 = coalesced.latency.percentileMs(99);
  const keptUp = coalesced.done >= 0.98 * coalesced.offered && coalesced.failed === 0 && p99 < window.seconds * 1000;
  console.log(
    `${what}: the coalesced design ${keptUp ? 'kept up with' : 'FELL BEHIND'} the offered load ` +
      `(${fmt(coalesced.done, 0)} of ${fmt(coalesced.offered, 0)} ${unit}s done, p99 ${fmt(p99, 0)} ms); ` +
      `the baseline did ${fmt(perUnit.done / perUnit.seconds, 0)} ${unit}s/s at p50 ${fmt(perUnit.latency.percentileMs(50), 1)} ms`,
  );
  const base = perThousand(perUnit, idleMsPerS);
  const co = perThousand(coalesced, idleMsPerS);
  ratio(`${what}: host CPU per ${unit} net of idle, one request each ÷ coalesced`, base.netCpu, co.netCpu, { atLeast: 20 });
  ratio(`${what}: host CPU per ${unit} (gross), one request each ÷ coalesced`, base.cpu, co.cpu);
  ratio(`${what}: requests per ${unit}, one request each ÷ coalesced`, base.requests, co.requests);
  ratio(`${what}: storage requests per ${unit}, one request each ÷ coalesced`, base.storage, co.storage);
  batching(what, unit, coalesced.offered / window.seconds, perUnit, coalesced, idleMsPerS);
}

async function main(): Promise<void> {
  header('client');
  const hogs = cpuHogs();
  const { TallyhoClient } = (await import(
    pathToFileURL(join(repoRoot, 'clients', 'typescript', 'dist', 'index.js')).href
  )) as typeof ClientModule;
  const host = await startClientBenchHost(options['real-host']);
  console.log(
    `host: ${host.name}; ${options.busy ? `beside ${hogs.length} busy loops (one per core)` : 'no load added by the bench'}; load average ${load()}`,
  );
  try {
    const api = `${host.baseUrl}/api`;
    let sent = 0;
    let eventsSent = 0;
    const counted = (input: string, init: RequestInit): Promise<Response> => {
      sent++;
      if (input.includes('/streams/') && typeof init.body === 'string') eventsSent += init.body.split('"seq":').length - 1;
      return fetch(input, init);
    };
    const meters: Meters = {
      requests: () => sent,
      hostCpuMs: () => host.cpuMs(),
      storage: () => host.storage(),
      eventsSent: () => eventsSent,
    };
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

    const idle = await idleCpuMsPerSecond(window.seconds, meters);
    console.log(
      `\nhost CPU with nothing sent: ${fmt(idle, 1)} ms/s over ${window.seconds} s (subtracted below as "net of idle"); load average ${load()}`,
    );

    const counterName = `bench-${Date.now()}`;
    await client.counters.configure(counterName, { mode: 'hits', partitions: 4 });
    let resolved = 0;
    const perIncrement = await runClosed(
      window,
      baselineCallers,
      () => post(`counters/${counterName}/increment`, { by: 1 }).then(() => void resolved++),
      meters,
    );
    const designs = [
      { name: 'client increment(), linger 0 (end of turn)', options: { lingerMs: 0 } },
      { name: 'client increment(), defaults', options: {} },
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
    table(`Increments to one counter (hits, 4 partitions), ${window.seconds} s after ${window.warmupSeconds} s; load average ${load()}`, [
      row(`one request per increment, ${baselineCallers} callers in closed loops (baseline)`, 'increments', perIncrement, idle),
      ...coalescedRuns.map((r) =>
        row(`${r.name}, ${fmt(counterLoad.rate, 0)}/s offered by ${producers} producers`, 'increments', r.result, idle),
      ),
    ]);
    console.log(`counter value after the run: ${fmt(stored.value, 0)}; increments that resolved: ${fmt(resolved, 0)}`);
    if (stored.value !== resolved) throw new Error(`the counter holds ${stored.value}, not the ${resolved} increments that resolved`);
    verdicts('counters', 'increment', perIncrement, coalescedRuns.at(-1)?.result as LoadResult, idle);

    const eventType = `bench-${Date.now()}`;
    const seqs = Array.from({ length: baselineCallers }, () => 0);
    const perAppend = await runClosed(
      window,
      baselineCallers,
      (w) => {
        seqs[w] = (seqs[w] ?? 0) + 1;
        return post(`streams/${eventType}/events`, { events: [{ producer: `bench-${w}`, seq: seqs[w], data: { w } }] });
      },
      meters,
    );
    const streamDesigns = [
      { name: 'stream append(), linger 0, 1 in flight (the earlier writer)', options: { lingerMs: 0, maxInFlight: 1 } },
      { name: 'stream append(), defaults', options: {} },
    ];
    const appendRuns: { name: string; result: LoadResult }[] = [];
    for (const d of streamDesigns) {
      const stream = client.stream(eventType, { producer: `bench-client-${appendRuns.length}`, ...d.options });
      appendRuns.push({ name: d.name, result: await runOffered(streamLoad, () => stream.append({ n: 1 }).then(() => undefined), meters) });
      await stream.close();
    }
    table(`Appends to one event type (ack: buffered), ${window.seconds} s after ${window.warmupSeconds} s; load average ${load()}`, [
      row(
        `one request per append, ${baselineCallers} callers in closed loops, each its own producer (baseline)`,
        'events',
        perAppend,
        idle,
      ),
      ...appendRuns.map((r) => row(`${r.name}, ${fmt(streamLoad.rate, 0)}/s offered by ${producers} producers`, 'events', r.result, idle)),
    ]);
    verdicts('streams', 'event', perAppend, appendRuns.at(-1)?.result as LoadResult, idle);
    await client.close();
  } finally {
    await host.stop();
    for (const hog of hogs) hog.kill('SIGKILL');
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
