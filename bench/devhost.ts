/**
 * The offline host's own cost. Every server runs in its own process (spawned), the load generator
 * (autocannon) in this one, so client and server get a core each on a 2-core machine.
 *   - start-up: spawn → "listening" for a trivial app and for the Tallyho app;
 *   - a trivial function (bench/fixtures/trivial) through the devhost, buffered and in HTTP stream
 *     mode (requests handed to the library's proxy in-process, and forwarded over TCP as the real
 *     host does), against a plain node:http server running the same handler;
 *   - POST /api/sequences/{name}/next with count 1 and count 100 through the devhost (the app uses
 *     stream mode), against a plain node:http server calling the same `RouteDefinition.run`.
 * Targets (2 cores): ≥ 5,000 single-number requests/s with p99 < 10 ms, ≥ 200,000 numbers/s with
 * count 100, and at most 1.5× the plain server's cost.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

import autocannon from 'autocannon';

import { startAzurite } from '../devhost/azurite';
import { processCpuMs } from './support/proc';
import { header, median, ratio, type Row, table } from './support/report';
import { sampleSettings } from './support/settings';

const repoRoot = resolve(__dirname, '..', '..');
const cli = join(repoRoot, 'dist', 'devhost', 'cli.js');
const plainServer = join(__dirname, 'support', 'plainServer.js');
const trivialApp = join(repoRoot, 'bench', 'fixtures', 'trivial');
const durationS = Number(process.env.BENCH_DURATION_S ?? '6');
const connections = 16;

interface Server {
  readonly url: string;
  readonly startMs: number;
  /** CPU time (user + system) the server process has used so far, in ms (Linux /proc). */
  cpuMs(): number;
  stop(): Promise<void>;
}

function launch(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Server> {
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolveServer, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m === null) return;
      child.stdout?.off('data', onData);
      resolveServer({
        url: m[1] as string,
        startMs: performance.now() - started,
        cpuMs: () => processCpuMs(child.pid),
        stop: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
          }),
      });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${output}`)));
  });
}

interface Load {
  readonly rps: number;
  /** Server CPU time per request in µs: what the host costs, whatever else the machine is doing. */
  readonly cpuUsPerRequest: number;
  readonly p50: number;
  readonly p99: number;
  readonly failures: number;
}

async function load(server: Server, path: string, options: { method?: 'GET' | 'POST'; body?: string } = {}): Promise<Load> {
  const url = `${server.url}${path}`;
  const opts = {
    url,
    connections,
    method: options.method ?? 'GET',
    ...(options.body === undefined ? {} : { body: options.body, headers: { 'content-type': 'application/json' } }),
  };
  await autocannon({ ...opts, duration: 1 }); // warm-up
  const cpuBefore = server.cpuMs();
  const result = await autocannon({ ...opts, duration: durationS });
  const cpuUsPerRequest = ((server.cpuMs() - cpuBefore) * 1000) / Math.max(1, result.requests.total);
  return {
    rps: result.requests.average,
    cpuUsPerRequest,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

async function put(url: string): Promise<void> {
  const res = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' });
  if (res.status !== 201 && res.status !== 200) throw new Error(`PUT ${url} answered ${res.status}`);
}

async function main(): Promise<void> {
  header('devhost');
  const azurite = await startAzurite();
  const baseEnv: NodeJS.ProcessEnv = { ...process.env, ...sampleSettings(), AzureWebJobsStorage: azurite.connectionString };
  const devhost = (appRoot: string, env: NodeJS.ProcessEnv = {}): Promise<Server> =>
    launch([cli, '--app', appRoot, '--port', '0', '--quiet'], { ...baseEnv, ...env }, appRoot);
  const plain = (mode: string): Promise<Server> => launch([plainServer, mode], baseEnv, repoRoot);
  const rows: Row[] = [];
  const row = (scenario: string, l: Load, numbersPerRequest = 1): void => {
    rows.push({
      scenario,
      'req/s': l.rps,
      'numbers/s': l.rps * numbersPerRequest,
      'server CPU µs/req': l.cpuUsPerRequest,
      'p50 ms': l.p50,
      'p99 ms': l.p99,
      failures: l.failures,
    });
  };
  try {
    // Start-up: spawn to listening (median of 3).
    const startup: Row[] = [];
    for (const [label, appRoot, env] of [
      ['trivial app (buffered)', trivialApp, {}],
      ['trivial app (stream mode)', trivialApp, { BENCH_STREAM: 'true' }],
      ['Tallyho app', repoRoot, {}],
    ] as const) {
      const times: number[] = [];
      for (let i = 0; i < 3; i++) {
        const s = await devhost(appRoot, env);
        times.push(s.startMs);
        await s.stop();
      }
      startup.push({ app: label, 'spawn → listening ms (median of 3)': median(times) });
    }
    const plainStart: number[] = [];
    for (let i = 0; i < 3; i++) {
      const s = await plain('trivial');
      plainStart.push(s.startMs);
      await s.stop();
    }
    startup.push({ app: 'plain node:http (baseline)', 'spawn → listening ms (median of 3)': median(plainStart) });
    table('Start-up', startup);

    // Trivial function.
    const basePlain = await plain('trivial');
    const plainTrivial = await load(basePlain, '/');
    await basePlain.stop();
    row('trivial — plain node:http', plainTrivial);
    const webPlain = await plain('trivial-web');
    const webLoad = await load(webPlain, '/');
    await webPlain.stop();
    row('trivial — plain node:http + one web Request/Response (as the library makes)', webLoad);
    const buffered = await devhost(trivialApp);
    const bufferedLoad = await load(buffered, '/api/ping');
    await buffered.stop();
    row('trivial — devhost, buffered', bufferedLoad);
    const streamed = await devhost(trivialApp, { BENCH_STREAM: 'true' });
    const streamLoad = await load(streamed, '/api/ping');
    await streamed.stop();
    row('trivial — devhost, stream mode (in-process hand-over)', streamLoad);
    const tcp = await devhost(trivialApp, { BENCH_STREAM: 'true', DEVHOST_STREAM_FORWARDING: 'tcp' });
    const tcpLoad = await load(tcp, '/api/ping');
    await tcp.stop();
    row('trivial — devhost, stream mode (TCP forwarding, as the real host)', tcpLoad);

    // Sequences.
    const seqPlain = await plain('sequences');
    await put(`${seqPlain.url}/api/sequences/bench-plain`);
    const plainOne = await load(seqPlain, '/api/sequences/bench-plain/next', { method: 'POST', body: '{}' });
    const plainHundred = await load(seqPlain, '/api/sequences/bench-plain/next', { method: 'POST', body: '{"count":100}' });
    await seqPlain.stop();
    row('next count=1 — plain node:http', plainOne);
    row('next count=100 — plain node:http', plainHundred, 100);
    const app = await devhost(repoRoot);
    await put(`${app.url}/api/sequences/bench-devhost`);
    const one = await load(app, '/api/sequences/bench-devhost/next', { method: 'POST', body: '{}' });
    const hundred = await load(app, '/api/sequences/bench-devhost/next', { method: 'POST', body: '{"count":100}' });
    await app.stop();
    row('next count=1 — devhost (app in stream mode)', one);
    row('next count=100 — devhost (app in stream mode)', hundred, 100);

    table(`Throughput and latency (${connections} connections, ${durationS} s each after a 1 s warm-up)`, rows);
    // Server CPU per request is the host's cost independent of what else runs on the machine.
    ratio('trivial: devhost buffered ÷ plain (server CPU per request)', bufferedLoad.cpuUsPerRequest, plainTrivial.cpuUsPerRequest, {
      atMost: 1.5,
    });
    ratio('trivial: devhost stream mode ÷ plain (server CPU per request)', streamLoad.cpuUsPerRequest, plainTrivial.cpuUsPerRequest, {
      atMost: 1.5,
    });
    ratio('sequences count=1: devhost ÷ plain (server CPU per request)', one.cpuUsPerRequest, plainOne.cpuUsPerRequest, { atMost: 1.5 });
    ratio('sequences count=100: devhost ÷ plain (server CPU per request)', hundred.cpuUsPerRequest, plainHundred.cpuUsPerRequest, {
      atMost: 1.5,
    });
    ratio('trivial: plain ÷ devhost buffered (requests/s)', plainTrivial.rps, bufferedLoad.rps, { atMost: 1.5 });
    ratio('trivial: plain ÷ devhost stream mode (requests/s)', plainTrivial.rps, streamLoad.rps, { atMost: 1.5 });
    ratio('trivial: plain + web Request/Response ÷ plain (server CPU per request)', webLoad.cpuUsPerRequest, plainTrivial.cpuUsPerRequest);
    ratio('trivial: buffered ÷ stream mode (the library proxy path)', bufferedLoad.rps, streamLoad.rps);
    ratio('trivial: in-process hand-over ÷ TCP forwarding (the extra hop)', streamLoad.rps, tcpLoad.rps);
    ratio('sequences count=1: plain ÷ devhost (requests/s)', plainOne.rps, one.rps, { atMost: 1.5 });
    ratio('sequences count=100: plain ÷ devhost (requests/s)', plainHundred.rps, hundred.rps, { atMost: 1.5 });
    const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT met');
    console.log(`TARGET sequences count=1 ≥ 5,000 req/s: ${Math.round(one.rps)} req/s [${verdict(one.rps >= 5000)}]`);
    console.log(`TARGET sequences count=1 p99 < 10 ms: ${one.p99} ms [${verdict(one.p99 < 10)}]`);
    console.log(
      `TARGET sequences count=100 ≥ 200,000 numbers/s: ${Math.round(hundred.rps * 100)} numbers/s [${verdict(hundred.rps * 100 >= 200_000)}]`,
    );
  } finally {
    await azurite.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
