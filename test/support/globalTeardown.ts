/**
 * Global teardown of the projects that use storage: the shared hosts stop (test/e2e/support/sharedHost.ts),
 * then the run's Azurite (test/support/globalSetup.ts).
 */
import { stopSharedHosts } from '../e2e/support/sharedHost';
import { stopRunStorage } from './storageAccounts';

export default async function globalTeardown(): Promise<void> {
  await stopSharedHosts();
  await stopRunStorage();
}
