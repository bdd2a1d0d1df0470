/**
 * Fresh, empty storage for a test that needs what a reader's first `npm start` has (the docs pages,
 * the packed clients' pages): accounts of their own in the run's Azurite, instead of an Azurite each.
 * The run's Azurite (and the real-host projects' one) is started with every account listed here; a
 * test takes the account named for its use, once per Azurite, so two uses never meet. Where storage
 * came from outside (TEST_STORAGE_CONNECTION given), there are no spare accounts and the caller starts
 * an Azurite of its own.
 */
import { accountConnectionString, startAzurite } from '../../devhost/azurite';

/** One account per documentation page (by its index in the page list) and per packed client. */
export const spareAccounts: readonly string[] = [...Array.from({ length: 24 }, (_, i) => `docs${i}`), 'clientnpm', 'clientnuget'];

/** Set by the set-up that started the Azurite of TEST_STORAGE_CONNECTION with `spareAccounts`. */
export const spareAccountsVariable = 'TEST_STORAGE_SPARE_ACCOUNTS';

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
