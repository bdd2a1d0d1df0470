/**
 * The durable fixture app on an in-process host (loaded as `startHost` loads any app), with an
 * in-memory store and a client on the engine for the test to look through.
 */
import { join } from 'node:path';

import { DurableClientApi } from '../../../durable/client';
import { DurableExtension } from '../../../durable/extension';
import { MemoryStore } from '../../../durable/memoryStore';
import type { StatusPayload } from '../../../durable/status';
import { type RunningHost, startHost, type StartHostOptions } from '../../../host';

const durableAppRoot = join(__dirname, '..', 'fixtures', 'durable-app');

export interface InProcessHost {
  readonly host: RunningHost;
  readonly client: DurableClientApi;
  readonly durable: DurableExtension;
  /** Everything the host logged, as `level: message`. */
  readonly logs: string[];
}

export async function startInProcess(options: Partial<StartHostOptions> = {}): Promise<InProcessHost> {
  const durable = new DurableExtension({ store: new MemoryStore() });
  const logs: string[] = [];
  const host = await startHost({
    appRoot: durableAppRoot,
    port: 0,
    quiet: true,
    log: (level, message) => logs.push(`${level}: ${message}`),
    extensions: [durable],
    ...options,
  });
  const engine = durable.running;
  if (engine === undefined) throw new Error('the durable engine did not start');
  return { host, client: new DurableClientApi(engine), durable, logs };
}

/** The instance's status once it has completed, failed or been terminated. */
export async function finished(client: DurableClientApi, id: string): Promise<StatusPayload> {
  for (let i = 0; i < 500; i++) {
    const status = client.status(id, { showHistory: false });
    if (status !== undefined && ['Completed', 'Failed', 'Terminated'].includes(status.runtimeStatus)) return status;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${id} did not finish`);
}
