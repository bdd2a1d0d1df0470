/**
 * Envelope ids as a declared processor's retry lane carries them (./carriage.ts). An envelope id
 * names a batch of a job (`0.3`, or a part of one: `0.3:k2`); on a lane message it is followed by
 * `!` and a carrier key, 16 random characters the message was sent with, so that two messages with
 * the same batch can be told apart and a message sent by this version is known to need its carrier
 * row. Messages of a processor's queue, and lane messages of an earlier version, have no key.
 * The wire allows 64 characters for the whole id, so a batch id longer than 47 is shortened to a
 * hash of itself (a part of a part of … a batch: unique, as the ids it is made from are).
 */
import { createHash, randomBytes } from 'node:crypto';

const mark = '!';
const keyLength = 16;
const maxBatchIdLength = 64 - mark.length - keyLength;

export interface CarriedId {
  /** The batch: the key of its carrier row. */
  readonly batch: string;
  /** The key of the message that carries it, when a lane message was sent with one. */
  readonly key: string | undefined;
}

/** A batch id short enough to take a key (ids of earlier versions can be up to 64 characters). */
function fitted(batch: string): string {
  return batch.length <= maxBatchIdLength ? batch : `h${createHash('sha256').update(batch).digest('base64url').slice(0, 32)}`;
}

export function carriedIdOf(envelopeId: string): CarriedId {
  const at = envelopeId.lastIndexOf(mark);
  if (at < 0) return { batch: fitted(envelopeId), key: undefined };
  return { batch: fitted(envelopeId.slice(0, at)), key: envelopeId.slice(at + 1) };
}

/** The envelope id of a lane message carrying `batch` with `key`. */
export function keyedId(batch: string, key: string): string {
  return `${fitted(batch)}${mark}${key}`;
}

/** A fresh carrier key (12 random bytes, base64url: 16 characters). */
export function newCarrierKey(): string {
  return randomBytes(12).toString('base64url');
}

/** The id of a part of `batch` (`tag` says which: where it went, at which delivery). */
export function partId(batch: string, tag: string): string {
  return fitted(`${batch}:${tag}`);
}
