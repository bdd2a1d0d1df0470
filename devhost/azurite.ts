/**
 * Starts Azurite (from npm) as a child process on free (or given) ports and waits until it says all
 * three services listen. Used by `npm start`, the test global setup and the benchmarks.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { connect, createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { keyLookupsByNarrowerIndex, skipEmptyLokiRemovals } from './azuriteLoki';
import { batchAzuriteExtentDeletes } from './azuriteQueueGc';

const azuriteAccount = {
  name: 'devstoreaccount1',
  key: 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==',
} as const;

export interface AzuritePorts {
  readonly blob: number;
  readonly queue: number;
  readonly table: number;
}

export interface AzuriteOptions {
  /** Fixed ports; any left out is chosen free. */
  readonly ports?: Partial<AzuritePorts>;
  /** Keep data in this folder instead of in memory. */
  readonly location?: string;
  /**
   * Run Azurite in its own process group, so a Ctrl+C in the terminal reaches only the parent, which
   * then stops the app before Azurite (npm start).
   */
  readonly detached?: boolean;
  /** Pass Azurite's access log through to this process's output. */
  readonly verbose?: boolean;
  /**
   * Storage accounts to hold beside devstoreaccount1, with its key: each a namespace of its own
   * (tables, queues, blobs), so a caller can give a user fresh storage without another Azurite.
   * `accountConnectionString` names one.
   */
  readonly accounts?: readonly string[];
  readonly host?: string;
}

export interface RunningAzurite {
  readonly ports: AzuritePorts;
  readonly host: string;
  readonly connectionString: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Runs Azurite's CLI (argv[1] onwards), its patches applied first (below), and exits
 * when our end of its stdin closes, so an Azurite started by a test run or `npm start` never
 * outlives it, even when that process is killed outright.
 * On SIGTERM/SIGINT Azurite closes its servers and relies on the event loop emptying to exit, so the
 * wrapper lets go of stdin then (otherwise the open pipe keeps it alive until stop() kills it).
 */
export const exitWithParent = [
  'const [cli, ...rest] = process.argv.slice(1);',
  ...azuritePatches(),
  'process.argv = [process.argv[0], cli, ...rest];',
  "process.stdin.on('end', () => process.exit(0));",
  "process.stdin.on('data', () => undefined);",
  "const letGo = () => { process.stdin.removeAllListeners('end'); process.stdin.destroy(); };",
  "process.once('SIGTERM', letGo).once('SIGINT', letGo);",
  'require(cli);',
].join(' ');

/**
 * A patch applied inside Azurite's process before its CLI loads: `patch` (self-contained, as its
 * source is what runs) gets `require` and the path of what it patches and answers why it could not
 * patch, or undefined; when it could not, Azurite runs unpatched and `unpatched` goes to its stderr
 * with the reason. Each in a block of its own, so the script's names never clash.
 */
function beforeAzurite(
  patch: (load: (path: string) => unknown, path: string) => string | undefined,
  path: string,
  unpatched: string,
): string {
  return (
    `{ const why = (${patch.toString()})(require, ${JSON.stringify(path)}); ` +
    `if (why !== undefined) process.stderr.write(${JSON.stringify(unpatched)} + ' (' + why + ')\\n'); }`
  );
}

/** The patches Azurite runs with (each file says why; Azurite's behaviour does not change). */
function azuritePatches(): string[] {
  return [
    // Its in-memory sweep deletes extents in one pass (devhost/azuriteQueueGc.ts).
    beforeAzurite(
      batchAzuriteExtentDeletes,
      azuritePersistenceDir(),
      "Azurite's extent sweep is left one delete at a time: expect pauses of seconds",
    ),
    // LokiJS removes nothing without re-sorting every index (devhost/azuriteLoki.ts).
    beforeAzurite(skipEmptyLokiRemovals, azuriteLokiPath(), "Azurite's queues re-sort their indices on every operation"),
    // LokiJS finds a table entity by its keys through the narrower index (devhost/azuriteLoki.ts).
    beforeAzurite(keyLookupsByNarrowerIndex, azuriteLokiPath(), "Azurite's tables scan a partition for every key lookup"),
  ];
}

/**
 * The LokiJS Azurite loads (its in-memory database: devhost/azuriteLoki.ts patches it), resolved from
 * Azurite's folder: Azurite's dependency, not this repository's (knip.json ignores it for that reason).
 */
export function azuriteLokiPath(): string {
  return require.resolve('lokijs', { paths: [azuriteSourceDir()] });
}

/** The folder of Azurite's extent stores (the modules devhost/azuriteQueueGc.ts patches). */
export function azuritePersistenceDir(): string {
  return join(azuriteSourceDir(), 'common', 'persistence');
}

/** Azurite's own code: where both patches find what they patch. */
function azuriteSourceDir(): string {
  return dirname(require.resolve('azurite/dist/src/azurite.js'));
}

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export function connectionStringFor(host: string, ports: AzuritePorts): string {
  const base = (port: number): string => `http://${host}:${port}/${azuriteAccount.name}`;
  return [
    'DefaultEndpointsProtocol=http',
    `AccountName=${azuriteAccount.name}`,
    `AccountKey=${azuriteAccount.key}`,
    `BlobEndpoint=${base(ports.blob)}`,
    `QueueEndpoint=${base(ports.queue)}`,
    `TableEndpoint=${base(ports.table)}`,
  ].join(';');
}

/**
 * The connection string of another account of the same Azurite (one started with `accounts`): an
 * Azurite connection string addresses its account by name, in AccountName and in each endpoint's path.
 */
export function accountConnectionString(connectionString: string, account: string): string {
  const from = /AccountName=([^;]+)/.exec(connectionString)?.[1];
  if (from === undefined) throw new Error('not an Azurite connection string: it names no account');
  return connectionString
    .split(';')
    .map((part) => (part.startsWith('AccountName=') ? `AccountName=${account}` : part.replace(new RegExp(`/${from}$`), `/${account}`)))
    .join(';');
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** What listens on a port: nothing, an Azurite (its `Server` header says so), or something else. */
export type PortHolder = 'free' | 'azurite' | 'other';

export function whoListens(host: string, port: number): Promise<PortHolder> {
  return new Promise((resolve) => {
    const req = request({ host, port, path: '/', method: 'GET', timeout: 2000 }, (res) => {
      res.resume();
      resolve(/^Azurite-/i.test(String(res.headers.server ?? '')) ? 'azurite' : 'other');
    });
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? 'free' : 'other'));
    req.end();
  });
}

/**
 * Until Azurite itself says its last service (Table, after Blob and Queue) is listening: a port that
 * accepts connections may be another process's, taken between the check below and Azurite's bind, and
 * the same build's real host was once taken for ours that way (test/parity/hostStart.test.ts). Its
 * output passes through when verbose; otherwise only its error output is kept, for a failed start
 * (an EADDRINUSE there makes startAzurite try new ports). No time budget: a start ends when Azurite
 * says it listens or when it exits, so a busy machine makes it slower, never a failure (a 30 s budget
 * ran out beside a soak run and a CI run).
 */
function listening(child: ChildProcess, verbose: boolean): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let out = '';
    let err = '';
    let ready = false;
    child.stdout?.on('data', (chunk: Buffer) => {
      if (verbose) process.stdout.write(chunk);
      if (ready) return;
      out += chunk.toString();
      if (/Azurite Table service is successfully listening/.test(out)) {
        ready = true;
        out = '';
        resolve();
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (verbose) process.stderr.write(chunk);
      if (!ready) err += chunk.toString();
    });
    child.once('exit', () => {
      reject(new Error(`Azurite exited before listening${err === '' ? '' : `\n${err}`}`));
    });
  });
}

/**
 * Starts Azurite. Ports left to it are free when chosen, but another process may take one before
 * Azurite binds it (busy test runs start many servers at once); then it tries again with new ones.
 */
export async function startAzurite(options: AzuriteOptions = {}): Promise<RunningAzurite> {
  const chosen = options.ports ?? {};
  const allGiven = chosen.blob !== undefined && chosen.queue !== undefined && chosen.table !== undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startAzuriteOnce(options);
    } catch (err) {
      const taken = err instanceof Error && /EADDRINUSE/.test(err.message);
      if (!taken || allGiven || attempt >= 3) throw err;
    }
  }
}

async function startAzuriteOnce(options: AzuriteOptions): Promise<RunningAzurite> {
  const host = options.host ?? '127.0.0.1';
  const ports: AzuritePorts = {
    blob: options.ports?.blob ?? (await freePort(host)),
    queue: options.ports?.queue ?? (await freePort(host)),
    table: options.ports?.table ?? (await freePort(host)),
  };
  const args = [
    require.resolve('azurite/dist/src/azurite.js'),
    '--blobHost',
    host,
    '--queueHost',
    host,
    '--tableHost',
    host,
    '--blobPort',
    String(ports.blob),
    '--queuePort',
    String(ports.queue),
    '--tablePort',
    String(ports.table),
    '--disableTelemetry',
    '--skipApiVersionCheck',
    '--loose',
  ];
  if (options.location === undefined) {
    args.push('--inMemoryPersistence');
  } else {
    mkdirSync(options.location, { recursive: true });
    args.push('--location', options.location);
  }
  if (options.verbose !== true) args.push('--silent');
  // A port already answering fails at once, not after Azurite has tried it.
  for (const port of [ports.blob, ports.queue, ports.table])
    if (await canConnect(host, port)) throw new Error(`listen EADDRINUSE: ${host}:${port} is already in use`);
  // Azurite serves only the accounts AZURITE_ACCOUNTS lists once it is set, so the default one is listed too.
  const accounts = options.accounts ?? [];
  const accountList = [azuriteAccount.name, ...accounts].map((name) => `${name}:${azuriteAccount.key}`).join(';');
  const child = spawn(process.execPath, ['-e', exitWithParent, '--', ...args], {
    env: accounts.length === 0 ? process.env : { ...process.env, AZURITE_ACCOUNTS: accountList },
    detached: options.detached === true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => {
    exited = true;
  });
  try {
    await listening(child, options.verbose === true);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    ports,
    host,
    connectionString: connectionStringFor(host, ports),
    process: child,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exit;
      clearTimeout(timer);
    },
  };
}
