/** Starts fixture apps in-process for the devhost's own tests. */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import { startHost, type RunningHost, type StartHostOptions } from '../host';

export function fixture(name: string): string {
  return join(__dirname, 'fixtures', name);
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

export function storageConnection(): string {
  const cs = process.env.TEST_STORAGE_CONNECTION;
  if (cs === undefined) throw new Error('TEST_STORAGE_CONNECTION is not set (jest global setup starts Azurite)');
  return cs;
}

export async function startFixture(name: string, options: Partial<StartHostOptions> = {}): Promise<RunningHost> {
  return startHost({
    appRoot: fixture(name),
    port: 0,
    quiet: true,
    log: () => undefined,
    ...options,
    env: { AzureWebJobsStorage: process.env.TEST_STORAGE_CONNECTION, ...options.env },
  });
}
