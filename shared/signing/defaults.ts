/**
 * The process's Signer: from TALLYHO_SIGNING_KEY when it is set, otherwise from the key kept in the
 * app's storage (created on first use), so a local run needs no setup and a deployment never falls
 * back to a key anyone could know. Loaded once per process; a failed load is retried on next use.
 */
import { getConfig } from '../config';
import { containers } from '../resources';
import { getStorage } from '../storage/clients';
import { containerKeyBlob, loadOrCreateKey } from './keyStore';
import { Signer } from './signer';

let pending: Promise<Signer> | undefined;

export function getSigner(): Promise<Signer> {
  if (pending === undefined) {
    const config = getConfig();
    const load =
      config.signingKey !== undefined
        ? Promise.resolve(new Signer(config.signingKey))
        : loadOrCreateKey(containerKeyBlob(() => getStorage(config).container(containers.secrets))).then((key) => new Signer(key));
    pending = load.catch((err: unknown) => {
      pending = undefined;
      throw err;
    });
  }
  return pending;
}
