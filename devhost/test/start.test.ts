/**
 * `npm start` (dist/devhost/start.js) as a user runs it, against the built app in this repository:
 * only the devhost's own surfaces are used (the admin API, key enforcement, Azurite), never the app's.
 */
import { type ChildProcess, type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { delimiter, join } from 'node:path';

import { QueueServiceClient } from '@azure/storage-queue';

import type { FunctionSummary } from '../functionTable';
import { until, waitingFor } from '../../test/support/waits';
import { type AzuritePorts, connectionStringFor, freePort, startAzurite } from '../azurite';

const repoRoot = join(__dirname, '..', '..');
const startJs = join(repoRoot, 'dist', 'devhost', 'start.js');

interface Started {
  readonly child: ChildProcess;
  readonly exit: Promise<number | null>;
  readonly baseUrl: string;
  readonly httpPort: number;
  readonly ports: AzuritePorts;
  /** Undefined when start.js reused an Azurite it found on the ports. */
  readonly azuritePid: number | undefined;
  output(): string;
}

interface LaunchOptions {
  /** Azurite's ports (an Azurite or another listener may already be there); free ones otherwise. */
  readonly ports?: AzuritePorts;
  /** Its own process group, so the test can signal the group as a terminal's Ctrl+C does. */
  readonly group?: boolean;
}

/** PATH without any folder holding a `func` executable, so Core Tools are never found. */
function pathWithoutCoreTools(): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '' && !existsSync(join(dir, 'func')))
    .join(delimiter);
}

/** Processes whose parent is `pid` (Linux /proc), with their command lines. */
function childrenOf(pid: number): { pid: number; cmdline: string }[] {
  const out: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push({ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie has ended; only its exit status is left for its parent to collect.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const running = new Set<ChildProcess>();

/** Azurite's process ended (no budget of its own: test/support/waits.ts). */
function azuriteEnded(pid: number | undefined): Promise<boolean> {
  return until(`Azurite (pid ${String(pid)}) to end`, () => (pid !== undefined && !alive(pid) ? true : undefined), { everyMs: 50 });
}

function spawnStart(
  settings: Record<string, string>,
  httpPort: number,
  ports: AzuritePorts,
  group: boolean,
): ChildProcessByStdio<null, Readable, Readable> {
  expect(existsSync(startJs)).toBe(true); // run `npm run build` first
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: pathWithoutCoreTools(),
    PORT: String(httpPort),
    AZURITE_BLOB_PORT: String(ports.blob),
    AZURITE_QUEUE_PORT: String(ports.queue),
    AZURITE_TABLE_PORT: String(ports.table),
    ...settings,
  };
  // The storage setting must come from start.js (the test run's own Azurite is in the environment).
  delete env.AzureWebJobsStorage;
  // A host build in the environment (the real-host test runs have one) would make start.js use it.
  delete env.FUNCTIONS_HOST_BUILD;
  for (const key of ['FUNCTIONS_KEY', 'FUNCTIONS_ADMIN_KEY']) if (settings[key] === undefined) delete env[key];
  const child = spawn(process.execPath, [startJs], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: group });
  running.add(child);
  return child;
}

async function launch(settings: Record<string, string>, options: LaunchOptions = {}): Promise<Started> {
  const httpPort = await freePort();
  const ports: AzuritePorts = options.ports ?? { blob: await freePort(), queue: await freePort(), table: await freePort() };
  const child = spawnStart(settings, httpPort, ports, options.group === true);
  let output = '';
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Started is a line start.js prints; exiting first is a failed start. No time budget of its own.
  const baseUrl = await waitingFor(
    'start.js to listen',
    () =>
      new Promise<string>((resolve, reject) => {
        const onData = (chunk: Buffer): void => {
          output += chunk.toString();
          const m = /Host started \(\d+ ms\); listening on (\S+)/.exec(output);
          if (m !== null) resolve(m[1] as string);
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        void exit.then((code) => reject(new Error(`start.js exited (${code}) before listening:\n${output}`)));
      }),
    () => `start.js's output so far:\n${output}`,
  );
  const azurite = childrenOf(child.pid as number).filter((p) => p.cmdline.includes('azurite'));
  expect(azurite.length).toBeLessThanOrEqual(1);
  return { child, exit, baseUrl, httpPort, ports, azuritePid: azurite[0]?.pid, output: () => output };
}

/** Sends `signal` once; start.js must exit 0 with Azurite and the HTTP listener gone. */
async function expectStopsOn(started: Started, signal: NodeJS.Signals): Promise<void> {
  started.child.kill(signal);
  expect(await started.exit).toBe(0);
  const azuritePid = started.azuritePid;
  expect(azuritePid).toBeDefined();
  expect(await azuriteEnded(azuritePid)).toBe(true);
  for (const port of [started.httpPort, started.ports.blob, started.ports.queue, started.ports.table])
    expect(await canConnect(port)).toBe(false);
  expect(started.output()).toContain(`[start] ${signal}: stopping`);
}

async function functions(started: Started, adminKey?: string): Promise<FunctionSummary[]> {
  const res = await fetch(`${started.baseUrl}/admin/functions`, { headers: adminKey === undefined ? {} : { 'x-functions-key': adminKey } });
  expect(res.status).toBe(200);
  return (await res.json()) as FunctionSummary[];
}

/**
 * A function-level HTTP function that answers GET, with its route values filled in: key checking comes
 * before the function, so whatever the app would answer, a missing or wrong key is a 401.
 */
function functionLevelUrl(list: readonly FunctionSummary[]): string {
  const f = list.find(
    (x) => !x.isDisabled && x.http?.authLevel === 'function' && (x.http.methods.length === 0 || x.http.methods.includes('GET')),
  );
  if (f?.invoke_url_template === undefined) throw new Error('the built app has no function-level GET route');
  return f.invoke_url_template.replace(/\{[^}]*\}/g, 'start-test');
}

afterEach(() => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  running.clear();
});

describe('npm start (dist/devhost/start.js) without Core Tools', () => {
  test('says Core Tools are missing and runs the devhost on PORT, Azurite on the AZURITE_* ports with the storage setting following, keys enforced; one SIGTERM stops both, exit 0', async () => {
    const started = await launch({ FUNCTIONS_KEY: 'fn-key-start-test', FUNCTIONS_ADMIN_KEY: 'admin-key-start-test' });
    running.add(started.child);
    const output = started.output();
    expect(output).toContain('[start] Azure Functions Core Tools (func) are not installed: using the offline devhost');
    expect(output).toContain(
      `[start] Azurite on blob ${started.ports.blob}, queue ${started.ports.queue}, table ${started.ports.table} (in memory)`,
    );
    expect(started.baseUrl).toBe(`http://localhost:${started.httpPort}`);
    await until('the start says keys are on', () => (started.output().includes('[start] Function keys are on') ? true : undefined));
    expect(started.output()).not.toContain('Function keys are OFF');

    // Keys on: admin endpoints want the admin key, function-level ones a function (or admin) key.
    const status = (headers: Record<string, string>): Promise<number> =>
      fetch(`${started.baseUrl}/admin/host/status`, { headers }).then((r) => r.status);
    expect(await status({})).toBe(401);
    // A key the host knows without the level: 403, as on the real host (devhost/docs/real-host.md#keys).
    expect(await status({ 'x-functions-key': 'fn-key-start-test' })).toBe(403);
    expect(await status({ 'x-functions-key': 'admin-key-start-test' })).toBe(200);
    const list = await functions(started, 'admin-key-start-test');
    const url = functionLevelUrl(list);
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(`${url}?code=wrong-key`)).status).toBe(401);
    expect((await fetch(`${url}?code=fn-key-start-test`)).status).not.toBe(401);

    // The host's storage is the Azurite start.js moved: every queue a trigger listens on was created there.
    const triggerQueues = list.flatMap((f) =>
      f.config.bindings
        .filter((b) => b.type === 'queueTrigger' && (b.connection === undefined || b.connection === 'AzureWebJobsStorage'))
        .map((b) => String(b.queueName).toLowerCase()),
    );
    expect(triggerQueues.length).toBeGreaterThan(0);
    const queues = QueueServiceClient.fromConnectionString(connectionStringFor('127.0.0.1', started.ports));
    const names: string[] = [];
    for await (const q of queues.listQueues()) names.push(q.name);
    expect(names).toEqual(expect.arrayContaining(triggerQueues));

    await expectStopsOn(started, 'SIGTERM');
  });

  test('without FUNCTIONS_KEY / FUNCTIONS_ADMIN_KEY function keys are not enforced, /admin needs the printed master key; one SIGINT (Ctrl+C) stops both, exit 0', async () => {
    const started = await launch({});
    running.add(started.child);
    // The real host's admin API is never open (devhost/docs/real-host.md#keys).
    expect((await fetch(`${started.baseUrl}/admin/host/status`)).status).toBe(401);
    const master = /Master key for \/admin: (\S+)/.exec(started.output())?.[1];
    expect(master).toEqual(expect.any(String));
    // Said out loud (before: nothing told a developer that any caller gets in).
    const off = '[start] Function keys are OFF (FUNCTIONS_KEY and FUNCTIONS_ADMIN_KEY are unset)';
    await until('the start says keys are off', () => (started.output().includes(off) ? true : undefined));
    expect((await fetch(functionLevelUrl(await functions(started, master)))).status).not.toBe(401);
    await expectStopsOn(started, 'SIGINT');
  });

  test('Ctrl+C (SIGINT to the whole process group) stops the app first: open long polls (a gate wait, a job lease) get their normal timeout answers at once, the unused block of order numbers goes back, then Azurite stops', async () => {
    const started = await launch({ TALLYHO_GATES_WAIT_MAX_SECONDS: '220' }, { group: true });
    const api = `${started.baseUrl}/api`;
    const json = { 'content-type': 'application/json' };
    expect((await fetch(`${api}/gates/start-test-stop`, { method: 'PUT' })).status).toBe(201);
    expect((await fetch(`${api}/sequences/start-test-stop`, { method: 'PUT', headers: json, body: '{}' })).status).toBe(201);
    expect((await fetch(`${api}/sequences/start-test-stop/next`, { method: 'POST', headers: json, body: '{"count":1}' })).status).toBe(200);
    const declared = await fetch(`${api}/processors/start-test-stop`, {
      method: 'PUT',
      headers: json,
      body: '{"type":"external","batchSize":10,"leaseSeconds":60}',
    });
    expect(declared.status).toBe(201);
    // The longest gate wait the app allows (220 s, set so below): only the stop can answer it within
    // this test's limit (120 s; the test takes about 5 s), so a stop that left it to run out fails.
    const poll = fetch(`${api}/gates/start-test-stop/wait?timeout=220`).then(async (r) => ({
      status: r.status,
      body: await r.json(),
    }));
    // Nothing to lease: a worker's long poll waits its 55 s unless the stop answers it (204, as when the wait runs out).
    const lease = fetch(`${api}/processors/start-test-stop/leases`, { method: 'POST', headers: json, body: '{"wait":55}' }).then(
      (r) => r.status,
    );
    // Both requests have arrived once the host logs their invocations' start.
    await until('the gate wait and the lease request to arrive', () =>
      /Executing 'Functions\.gatesWait'/.test(started.output()) && /Executing 'Functions\.leasesTake'/.test(started.output())
        ? true
        : undefined,
    );

    const pid = started.child.pid as number;
    process.kill(-pid, 'SIGINT');
    expect(await started.exit).toBe(0);

    expect(await poll).toEqual({ status: 200, body: expect.objectContaining({ released: false, timedOut: true }) as unknown });
    expect(await lease).toBe(204);
    expect(started.output()).toMatch(/"event":"sequence\.tail_returned","sequence":"start-test-stop"/);
    expect(started.output()).not.toContain('tail_return_failed');
    const azuritePid = started.azuritePid;
    expect(azuritePid).toBeDefined();
    expect(await azuriteEnded(azuritePid)).toBe(true);
  }, 120_000);
});

describe('npm start with the Azurite ports already taken', () => {
  test('an Azurite already there is reused, said so (not "in memory"), and left running', async () => {
    const ports: AzuritePorts = { blob: await freePort(), queue: await freePort(), table: await freePort() };
    const existing = await startAzurite({ ports });
    try {
      const started = await launch({}, { ports });
      expect(started.azuritePid).toBeUndefined();
      expect(started.output()).toContain(
        `[start] Reusing the Azurite already running on blob ${ports.blob}, queue ${ports.queue}, table ${ports.table}`,
      );
      expect(started.output()).not.toContain('(in memory)');
      started.child.kill('SIGTERM');
      expect(await started.exit).toBe(0);
      expect(await canConnect(ports.blob)).toBe(true);
    } finally {
      await existing.stop();
    }
  });

  test('another program on one of the ports: start refuses, naming the port and how to move Azurite', async () => {
    const ports: AzuritePorts = { blob: await freePort(), queue: await freePort(), table: await freePort() };
    const sockets = new Set<Socket>();
    const other = createServer((socket) => {
      sockets.add(socket);
      socket.end('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
    });
    await new Promise<void>((r) => other.listen(ports.queue, '127.0.0.1', () => r()));
    try {
      const child = spawnStart({}, await freePort(), ports, false);
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
      expect(code).toBe(1);
      expect(output).toContain(`Port ${ports.queue} already in use`);
      expect(output).toContain('AZURITE_QUEUE_PORT');
      expect(output).not.toContain('Host started');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => other.close(r));
    }
  });
});
