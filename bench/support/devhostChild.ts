/** Starts the compiled devhost on this app (or another app folder) as a child process (as `npm start` would), for benchmarks. */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export interface DevhostChild {
  readonly baseUrl: string;
  readonly pid: number | undefined;
  output(): string;
  stop(): Promise<void>;
}

export async function startDevhostChild(env: Readonly<Record<string, string>>, appRoot?: string): Promise<DevhostChild> {
  const root = join(__dirname, '..', '..', '..');
  const app = appRoot ?? root;
  const child: ChildProcess = spawn(process.execPath, [join(root, 'dist', 'devhost', 'cli.js'), '--app', app, '--port', '0', '--quiet'], {
    cwd: app,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      log += chunk.toString();
      const m = /devhost listening on (\S+)/.exec(log);
      if (m?.[1] !== undefined) resolve(m[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`devhost exited (${code}):\n${log}`)));
  });
  return {
    baseUrl,
    pid: child.pid,
    output: () => log,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * The environment of a devhost a jobs benchmark counts storage for: its own task hub and queue
 * prefix on the proxied storage, and the other capabilities' timers off (their transactions would be
 * counted too).
 */
export function countedJobsHostEnv(connectionString: string, queuePrefix: string, hub: string): Record<string, string> {
  return {
    AzureWebJobsStorage: connectionString,
    AzureFunctionsJobHost__extensions__durableTask__hubName: hub,
    TALLYHO_TASK_HUB: hub,
    TALLYHO_JOBS_QUEUE_PREFIX: queuePrefix,
    'AzureWebJobs.countersRollup.Disabled': 'true',
    'AzureWebJobs.schedulesReconcile.Disabled': 'true',
  };
}
