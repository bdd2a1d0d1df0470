/**
 * Starts Azurite for the whole test run and hands its connection string to every test worker through
 * the environment (workers are forked after global setup, so they inherit it).
 */
import { startAzurite } from '../../devhost/azurite';
import { hostClaimsVariable, newHostClaims, runAccounts, spareAccountsVariable } from './storageAccounts';

declare global {
  var __AZURITE_STOP__: (() => Promise<void>) | undefined;
}

export default async function globalSetup(): Promise<void> {
  // Names this run, so work done once per run (the deployment package) is not taken from an earlier one.
  process.env.TEST_RUN_ID ??= `${Date.now().toString(36)}-${process.pid}`;
  if (process.env.TEST_STORAGE_CONNECTION !== undefined) return;
  const azurite = await startAzurite({ accounts: runAccounts });
  process.env.TEST_STORAGE_CONNECTION = azurite.connectionString;
  process.env[spareAccountsVariable] = 'true';
  process.env[hostClaimsVariable] = newHostClaims();
  process.env.AzureWebJobsStorage = azurite.connectionString;
  globalThis.__AZURITE_STOP__ = () => azurite.stop();
}
