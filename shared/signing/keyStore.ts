/**
 * The master signing key when TALLYHO_SIGNING_KEY is not set: 32 random bytes created on first use
 * and kept in a blob of the app's own storage (the `secrets` container; with identity-based
 * storage only the app's identity and its operators can read it). Every instance reads the same
 * blob, so a key created by one is used by all; two instances creating it at once both end up with
 * the one that was written first (create-if-absent, then read).
 */
import { randomBytes } from 'node:crypto';

import type { ContainerClient } from '@azure/storage-blob';

import { AppError } from '../errors';
import { hasStatus, translateStorageError } from '../storage/errors';
import { parseSigningKey, Signer } from './signer';

const signingKeyBlob = 'signing-key';

export interface KeyBlob {
  read(): Promise<string | undefined>;
  /** Writes `value` unless the blob exists; false when it already did. */
  createIfAbsent(value: string): Promise<boolean>;
}

export function containerKeyBlob(container: () => Promise<ContainerClient>): KeyBlob {
  const blob = async () => (await container()).getBlockBlobClient(signingKeyBlob);
  return {
    async read() {
      try {
        return (await (await blob()).downloadToBuffer()).toString('utf8');
      } catch (err) {
        if (hasStatus(err, 404)) return undefined;
        throw translateStorageError(err, 'reading the signing key');
      }
    },
    async createIfAbsent(value) {
      try {
        await (await blob()).upload(value, Buffer.byteLength(value), { conditions: { ifNoneMatch: '*' } });
        return true;
      } catch (err) {
        if (hasStatus(err, 409) || hasStatus(err, 412)) return false;
        throw translateStorageError(err, 'storing the signing key');
      }
    },
  };
}

function keyOf(text: string): Buffer {
  const key = parseSigningKey(text.trim());
  if (typeof key === 'string') throw new AppError('CorruptState', `The stored signing key ${key}`);
  return key;
}

export async function loadOrCreateKey(store: KeyBlob, random: () => Buffer = () => randomBytes(32)): Promise<Buffer> {
  const existing = await store.read();
  if (existing !== undefined) return keyOf(existing);
  const fresh = random().toString('base64');
  if (await store.createIfAbsent(fresh)) return keyOf(fresh);
  const winner = await store.read();
  if (winner === undefined) throw new AppError('DependencyUnavailable', 'The signing key could not be read back', { retryAfterSeconds: 1 });
  return keyOf(winner);
}

/**
 * The app's Signer: from TALLYHO_SIGNING_KEY when it is set, otherwise from the key kept in the
 * app's storage (created on first use), so a local run needs no setup and a deployment never falls
 * back to a key anyone could know. Loaded once; a failed load is retried on next use.
 */
export function signerOf(configured: Buffer | undefined, keyBlob: KeyBlob): () => Promise<Signer> {
  let pending: Promise<Signer> | undefined;
  return () => {
    if (pending === undefined) {
      const load =
        configured !== undefined ? Promise.resolve(new Signer(configured)) : loadOrCreateKey(keyBlob).then((key) => new Signer(key));
      pending = load.catch((err: unknown) => {
        pending = undefined;
        throw err;
      });
    }
    return pending;
  };
}
