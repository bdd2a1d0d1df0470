/**
 * Lease ids. A lease id names one queue message (its id and the pop receipt that holds it), the
 * envelope it carries (job, round, envelope, the job's item count), when the lease ends, and which
 * items it covers: per item a 48-bit MAC tag of the job and item id with the attempt the lease is,
 * so a completion can be checked to name only the lease's own items without any storage read, and
 * without the lease id carrying the ids themselves (they may be 128 characters each). The whole is
 * MACed (HMAC-SHA256, the `lease` subkey): a lease id cannot be forged or altered, and one whose pop
 * receipt has moved on (extended, completed, expired and received again) no longer holds anything.
 */

import type { Signer } from '../../signing/signer';

export interface LeaseItem {
  readonly id: string;
  /** The attempt this lease is for the item (1 for the first). */
  readonly attempt: number;
  readonly claimCheck: boolean;
}

export interface Lease {
  readonly processor: string;
  readonly queue: string;
  readonly messageId: string;
  readonly popReceipt: string;
  /** When the lease ends (ms). */
  readonly expiresAt: number;
  readonly jobId: string;
  readonly round: number;
  readonly envelope: string;
  /** Items in the whole job (the job is done when this many have a final result). */
  readonly jobItems: number;
  /** Per item: tag (6 bytes), attempt (7 bits) and claim check (1 bit). */
  readonly tags: Buffer;
  /** The message's dequeue count when it was leased (0: a lease id of the first form, which does not say). */
  readonly delivery: number;
  /** A worker used the lease already (an extension): the delivery is on record as received. */
  readonly used: boolean;
}

const tagBytes = 6;
const entryBytes = tagBytes + 1;
/** Attempts fit 7 bits (TALLYHO_JOBS_MAX_ATTEMPTS and a processor's maxAttempts stay far below). */
const maxAttempt = 127;

/** The tag of an item of a job: a MAC, so no one can make the tag of an item their lease does not cover. */
function tagOf(signer: Signer, jobId: string, itemId: string): Buffer {
  return Buffer.from(signer.mac('lease', `item\n${jobId}\n${itemId}`), 'base64url').subarray(0, tagBytes);
}

export function leaseTags(signer: Signer, jobId: string, items: readonly LeaseItem[]): Buffer {
  const out = Buffer.alloc(items.length * entryBytes);
  items.forEach((item, i) => {
    tagOf(signer, jobId, item.id).copy(out, i * entryBytes);
    out[i * entryBytes + tagBytes] = Math.min(item.attempt, maxAttempt) | (item.claimCheck ? 0x80 : 0);
  });
  return out;
}

/** The lease's entry for `itemId`: its attempt and claim-check flag, or undefined when the lease does not cover it. */
export function leaseEntry(signer: Signer, lease: Lease, itemId: string): { attempt: number; claimCheck: boolean } | undefined {
  const tag = tagOf(signer, lease.jobId, itemId);
  for (let at = 0; at + entryBytes <= lease.tags.length; at += entryBytes) {
    if (lease.tags.compare(tag, 0, tagBytes, at, at + tagBytes) === 0) {
      const byte = lease.tags[at + tagBytes] ?? 0;
      return { attempt: byte & 0x7f, claimCheck: (byte & 0x80) !== 0 };
    }
  }
  return undefined;
}

/** The highest attempt among the lease's items. */
export function leaseAttempt(lease: Lease): number {
  let max = 0;
  for (let at = tagBytes; at < lease.tags.length; at += entryBytes) max = Math.max(max, (lease.tags[at] ?? 0) & 0x7f);
  return max;
}

export function leaseSize(lease: Lease): number {
  return Math.floor(lease.tags.length / entryBytes);
}

type Wire = [number, string, string, string, string, number, string, number, string, number, string, number?, number?];

export function sealLease(lease: Lease, signer: Signer): string {
  const wire: Wire = [
    2,
    lease.processor,
    lease.queue,
    lease.messageId,
    lease.popReceipt,
    lease.expiresAt,
    lease.jobId,
    lease.round,
    lease.envelope,
    lease.jobItems,
    lease.tags.toString('base64url'),
    lease.delivery,
    lease.used ? 1 : 0,
  ];
  const body = Buffer.from(JSON.stringify(wire), 'utf8').toString('base64url');
  return `${body}.${signer.mac('lease', body)}`;
}

/** The lease a lease id names, or undefined when it is not one this app made (or was altered). */
export function openLease(leaseId: string, signer: Signer): Lease | undefined {
  const dot = leaseId.lastIndexOf('.');
  if (dot <= 0) return undefined;
  if (!signer.verify('lease', leaseId.slice(0, dot), leaseId.slice(dot + 1))) return undefined;
  return readLease(leaseId);
}

/**
 * What a lease id says, without checking its MAC: only for reports that read one (the scale-out
 * checker names the message each lease held); the app acts only on `openLease`.
 */
export function readLease(leaseId: string): Lease | undefined {
  const dot = leaseId.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const wire = JSON.parse(Buffer.from(leaseId.slice(0, dot), 'base64url').toString('utf8')) as Wire;
  // The first form (11 fields) was made before deliveries were recorded; it still opens, for the length of a lease.
  if (!Array.isArray(wire) || !((wire[0] === 1 && wire.length === 11) || (wire[0] === 2 && wire.length === 13))) return undefined;
  const [, processor, queue, messageId, popReceipt, expiresAt, jobId, round, envelope, jobItems, tags, delivery = 0, used = 0] = wire;
  return {
    processor,
    queue,
    messageId,
    popReceipt,
    expiresAt,
    jobId,
    round,
    envelope,
    jobItems,
    tags: Buffer.from(tags, 'base64url'),
    delivery,
    used: used === 1,
  };
}

/** The same lease with a new receipt and end (an extension, which is a use of it). */
export function renewed(lease: Lease, popReceipt: string, expiresAt: number): Lease {
  return { ...lease, popReceipt, expiresAt, used: true };
}

/** For a quick check of the id's shape before any MAC is computed. */
export const leaseIdPattern = /^[A-Za-z0-9_-]{16,8000}\.[A-Za-z0-9_-]{43}$/;
