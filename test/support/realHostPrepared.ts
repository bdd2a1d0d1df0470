/**
 * What the real-host projects' global setup (realHostSetup.ts) prepared, as workers find it in the
 * environment (TEST_REAL_HOST): the host build, the built extensions, a scratch folder and the
 * projects' Azurite. A module of its own, so the harness reads it without loading the set-up.
 */
import type { HostBuild, RealHostKeys } from '../../devhost/realHost/hostBuild';
import { hostClaimsVariable, spareAccountsVariable } from './storageAccounts';

export const realHostVariable = 'TEST_REAL_HOST';
const variable = realHostVariable;

export interface Prepared {
  readonly dir: string;
  readonly keys: RealHostKeys;
  readonly extensionsBin: string;
  readonly scratch: string;
  /** The real-host projects' Azurite (absent when TEST_REAL_HOST was given from outside). */
  readonly storage?: string;
  /** The claims on its host accounts (storageAccounts.ts). */
  readonly hostClaims?: string;
}

/**
 * In a worker of a real-host project: points the file's storage (the hosts it starts and its own
 * reads) at the projects' Azurite.
 */
export function useRealHostStorage(): void {
  const text = process.env[variable];
  if (text === undefined) return;
  const { storage, hostClaims } = JSON.parse(text) as Prepared;
  // On the devhost projects' Azurite, whose spare accounts the devhost runs of the same files take
  // (its host accounts are claimed, so both projects' hosts share them safely).
  if (storage === undefined) {
    delete process.env[spareAccountsVariable];
    return;
  }
  process.env.TEST_STORAGE_CONNECTION = storage;
  process.env.AzureWebJobsStorage = storage;
  process.env[spareAccountsVariable] = 'true';
  if (hostClaims === undefined) delete process.env[hostClaimsVariable];
  else process.env[hostClaimsVariable] = hostClaims;
}

/** In a worker: the host build, the built extensions and a scratch folder for app copies. */
export function realHostEnvironment(): { build: HostBuild; extensionsBin: string; scratch: string } {
  const text = process.env[variable];
  if (text === undefined) throw new Error(`${variable} is not set: the e2e-real project's global setup prepares the real host`);
  const prepared = JSON.parse(text) as Prepared;
  return { build: { dir: prepared.dir, keys: prepared.keys }, extensionsBin: prepared.extensionsBin, scratch: prepared.scratch };
}
