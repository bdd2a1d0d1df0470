/**
 * Global setup of the e2e projects on the devhost (e2e, client-e2e): the run's Azurite
 * (globalSetup.ts), and the devhost their files share (test/e2e/support/sharedHost.ts), started
 * when a file first asks for it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { launchSharedHost } from '../e2e/support/sharedHost';
import { startRunStorage } from './storageAccounts';

export default async function e2eSetup(): Promise<void> {
  await startRunStorage();
  launchSharedHost('devhost', () => mkdtempSync(join(tmpdir(), 'tallyho-shared-hosts-')));
}
