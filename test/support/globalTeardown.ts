/** Global teardown of the projects that use storage: the run's Azurite stops (test/support/globalSetup.ts). */
import { stopRunStorage } from './storageAccounts';

export default async function globalTeardown(): Promise<void> {
  await stopRunStorage();
}
