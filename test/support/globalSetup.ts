/**
 * Global setup of the jest projects that use storage (integration, devhost, e2e, client-e2e): starts
 * Azurite once for the run and hands its connection string to every test worker through the
 * environment (workers are forked after global setup, so they inherit it). Jest runs a project's
 * global setup only when one of its files takes part, and a module named by several projects once,
 * so a run of the unit and client projects alone (`npm run test:fast`) starts no Azurite at all.
 */
import { startRunStorage } from './storageAccounts';

export default async function globalSetup(): Promise<void> {
  await startRunStorage();
}
