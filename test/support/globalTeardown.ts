import { rmSync } from 'node:fs';

import { hostClaimsVariable } from './storageAccounts';

export default async function globalTeardown(): Promise<void> {
  await globalThis.__AZURITE_STOP__?.();
  const claims = process.env[hostClaimsVariable];
  if (claims !== undefined && globalThis.__AZURITE_STOP__ !== undefined) rmSync(claims, { recursive: true, force: true });
}
