/**
 * Storage accounts of the run's Azurite (and of the real-host projects' one), each a namespace of its
 * own (tables, queues, blobs), so users of storage that must not meet get one each instead of an
 * Azurite each:
 *
 * - every host a test starts claims an account of its own (`claimHostStorage`). The app's tables,
 *   queues and containers have fixed names, as in production, where each app has a storage account;
 *   two hosts on one account take each other's queue messages (a job's envelope worked, or left
 *   unfinished, by another file's host);
 * - a test that needs what a reader's first `npm start` has (the docs pages, the packed clients'
 *   pages) takes the spare account named for its use (`freshStorage`).
 *
 * Where storage came from outside (TEST_STORAGE_CONNECTION given), there are no such accounts: hosts
 * share its one account and `freshStorage` starts an Azurite of its own.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { accountConnectionString, startAzurite } from '../../devhost/azurite';

/** The run's storage (the global set-up's Azurite, or what was given from outside). */
export function runStorage(): string {
  const connection = process.env.TEST_STORAGE_CONNECTION;
  if (connection === undefined) throw new Error('TEST_STORAGE_CONNECTION is not set (jest global setup starts Azurite)');
  return connection;
}

/** One account per documentation page (by its index in the page list) and per packed client. */
const spareAccounts: readonly string[] = [...Array.from({ length: 24 }, (_, i) => `docs${i}`), 'clientnpm', 'clientnuget'];

/** Set by the set-up that started the Azurite of TEST_STORAGE_CONNECTION with `spareAccounts`. */
export const spareAccountsVariable = 'TEST_STORAGE_SPARE_ACCOUNTS';

/**
 * Accounts for hosts, claimed one per host and never handed out twice in a run. A run on the CI
 * machine starts about 60 hosts on each Azurite; a run that needs more fails loudly (claimHostStorage).
 */
const hostAccounts: readonly string[] = Array.from({ length: 150 }, (_, i) => `host${i}`);

/** Every account to start an Azurite with for a run: the spare ones and the hosts'. */
export const runAccounts: readonly string[] = [...spareAccounts, ...hostAccounts];

/** The folder of claims on the host accounts of TEST_STORAGE_CONNECTION's Azurite (a file per claimed account, holding the claimer's pid). */
export const hostClaimsVariable = 'TEST_STORAGE_HOST_CLAIMS';

/** A folder for the claims on a newly started Azurite's host accounts. */
function newHostClaims(): string {
  return mkdtempSync(join(tmpdir(), 'tallyho-host-accounts-'));
}

/**
 * The storage for one host: an account of its own in the run's Azurite (or in `base`, whose claims
 * are in `claims`). Jest's workers claim accounts by creating a file named after one (exclusive
 * create, so two workers never get the same one).
 */
export function claimHostStorage(base: string = runStorage(), claims: string | undefined = process.env[hostClaimsVariable]): string {
  if (claims === undefined || claims === '') return base;
  for (const account of hostAccounts) {
    try {
      writeFileSync(join(claims, account), `${process.pid}\n`, { flag: 'wx' });
      return accountConnectionString(base, account);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new Error(
    `Every one of the ${hostAccounts.length} host accounts of this run's Azurite is taken: add more (test/support/storageAccounts.ts)`,
  );
}

/** The connection string of a spare account of the run's Azurite, or undefined where it has none. */
function spareStorage(account: string): string | undefined {
  if (!spareAccounts.includes(account)) throw new Error(`${account} is not a spare account (test/support/storageAccounts.ts)`);
  const base = process.env.TEST_STORAGE_CONNECTION;
  if (base === undefined || process.env[spareAccountsVariable] !== 'true') return undefined;
  return accountConnectionString(base, account);
}

export interface FreshStorage {
  readonly connectionString: string;
  /** Stops the Azurite started for it; nothing for a spare account. */
  stop(): Promise<void>;
}

/** Fresh storage for one use: its spare account of the run's Azurite, or an Azurite of its own where the run has none. */
export async function freshStorage(account: string): Promise<FreshStorage> {
  const spare = spareStorage(account);
  if (spare !== undefined) return { connectionString: spare, stop: () => Promise.resolve() };
  const azurite = await startAzurite();
  return { connectionString: azurite.connectionString, stop: () => azurite.stop() };
}

declare global {
  var __AZURITE_STOP__: (() => Promise<void>) | undefined;
}

/**
 * Starts the run's Azurite (every account of `runAccounts`) unless storage was given from outside
 * (TEST_STORAGE_CONNECTION) or it runs already; for the global setup of the projects that use storage.
 */
export async function startRunStorage(): Promise<void> {
  if (process.env.TEST_STORAGE_CONNECTION !== undefined) return;
  const azurite = await startAzurite({ accounts: runAccounts });
  process.env.TEST_STORAGE_CONNECTION = azurite.connectionString;
  process.env[spareAccountsVariable] = 'true';
  process.env[hostClaimsVariable] = newHostClaims();
  process.env.AzureWebJobsStorage = azurite.connectionString;
  globalThis.__AZURITE_STOP__ = () => azurite.stop();
}

/** Stops the Azurite `startRunStorage` started (nothing when the storage came from outside). */
export async function stopRunStorage(): Promise<void> {
  const stop = globalThis.__AZURITE_STOP__;
  if (stop === undefined) return;
  globalThis.__AZURITE_STOP__ = undefined;
  await stop();
  const claims = process.env[hostClaimsVariable];
  if (claims !== undefined) rmSync(claims, { recursive: true, force: true });
}
