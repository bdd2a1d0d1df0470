/**
 * What the two client package tests (clientPackages.npm.test.ts, clientPackages.nuget.test.ts) share:
 * running a tool outside the repository, the lines the client pages promise their programs print,
 * and a host of this project on an Azurite of its own. Two files, so jest runs the npm and the .NET
 * halves on its two workers at once.
 */
import { delimiter, dirname } from 'node:path';

import { runProcess } from '../../support/dotnetBuild';
import { type FreshStorage, freshStorage } from '../../support/storageAccounts';
import { type E2eHost, externalHost, startE2eHost } from './harness';
import { queuesPolledPromptly } from './jobs';

/** A tool run in `cwd` with the node that runs jest first on PATH (npm's scripts and the programs run on it). */
function run(command: string, args: readonly string[], cwd: string, env: Record<string, string> = {}): ReturnType<typeof runProcess> {
  return runProcess(command, args, {
    cwd,
    env: {
      PATH: [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter),
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      ...env,
    },
  });
}

export async function ok(command: string, args: readonly string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const result = await run(command, args, cwd, env);
  if (result.code !== 0)
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited ${String(result.code)}:\n${result.output.slice(-8000)}`);
  return result.output;
}

/** The printed lines, in order, as the comments on the page state them; the pages differ in three. */
const pageLines = (sequence: string, cancelled: string, ledger: string): string[] => [
  sequence,
  'doors: released',
  'in the app: old',
  'in a test: new',
  'refunds: 97',
  cancelled,
  'nightly: cancelled',
  'completed 2',
  'doc-1 succeeded',
  'report: completed',
  'resumed: the same job',
  'thumbnails: completed',
  ledger,
  'doors listed: yes',
  'NotFound 404',
];
export const printed = {
  quickStart: ['ORD-0000001-3', 'page-views: 1', 'launch: released'],
  // TypeScript withdraws an aborted increment not yet sent; .NET sends it and stops only the wait.
  ts: pageLines('INV-0000001-3 10 false', 'increment: AbortError', 'ledger: 2 flushed'),
  csharp: pageLines('INV-0000001-3 False', 'increment: cancelled', 'ledger: 1 flushed'),
};

/** Each expected line appears in the output, in order (other lines may come between). */
export function expectInOrder(output: string, expected: readonly string[]): void {
  const lines = output.split('\n').map((line) => line.trim());
  let at = 0;
  const found = expected.map((want) => {
    const index = lines.findIndex((line, i) => i >= at && line === want);
    if (index >= 0) at = index + 1;
    return [want, index >= 0];
  });
  expect({ found, output }).toEqual({ found: expected.map((want) => [want, true]), output });
}

/**
 * A host of this project on storage of its own (a spare account of the run's Azurite, or an Azurite of
 * its own where the run has none), so the pages' names start fresh.
 */
export function ownHost(account: 'clientnpm' | 'clientnuget'): { host: () => E2eHost; env: () => Record<string, string> } {
  let storage: FreshStorage | undefined;
  let host: E2eHost | undefined;
  beforeAll(async () => {
    if (!externalHost) storage = await freshStorage(account);
    host = await startE2eHost({
      env: {
        AzureWebJobsStorage: storage?.connectionString,
        // Fast queue polling, so the pages' jobs complete in seconds.
        ...queuesPolledPromptly,
        TALLYHO_STREAMS_FLUSH_INTERVAL_MS: '200',
      },
    });
  });
  afterAll(async () => {
    await host?.dispose();
    await storage?.stop();
  });
  const started = (): E2eHost => {
    if (host === undefined) throw new Error('the host did not start');
    return host;
  };
  return {
    host: started,
    env: () => ({
      TALLYHO_BASE_URL: started().baseUrl,
      TALLYHO_FUNCTION_KEY: started().keys.function ?? '',
      TALLYHO_ADMIN_KEY: started().keys.admin ?? '',
    }),
  };
}
