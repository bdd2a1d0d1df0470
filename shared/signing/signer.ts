/**
 * Keyed MACs (HMAC-SHA256) for what the app must recognise as its own: job envelopes on the work
 * queues, and job ids derived from an Idempotency-Key. Each use gets its own subkey derived from the
 * one master key, so a MAC made for one purpose is never valid for another.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Shortest master key accepted, in bytes (HMAC-SHA256 gains nothing above 64). */
const minSigningKeyBytes = 32;

/**
 * `job-id`: ids of jobs a caller's Idempotency-Key names; `app-job-id`: ids of jobs the app submits
 * itself under its own keys (a schedule's or a gated run's), so no caller key can name one;
 * `envelope`: the seal of a queued envelope; `lease`: lease ids handed to workers.
 */
export type SigningPurpose = 'job-id' | 'app-job-id' | 'envelope' | 'lease';

const purposes: readonly SigningPurpose[] = ['job-id', 'app-job-id', 'envelope', 'lease'];

/** The key bytes of a base64 setting value, or a reason it is not one. */
export function parseSigningKey(text: string): Buffer | string {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) return 'is not base64';
  const key = Buffer.from(text, 'base64');
  return key.length < minSigningKeyBytes ? `decodes to ${key.length} bytes; at least ${minSigningKeyBytes} are needed` : key;
}

export class Signer {
  private readonly keys: ReadonlyMap<SigningPurpose, Buffer>;

  constructor(master: Buffer) {
    if (master.length < minSigningKeyBytes) throw new Error(`A signing key needs at least ${minSigningKeyBytes} bytes`);
    this.keys = new Map(purposes.map((p) => [p, createHmac('sha256', master).update(`tallyho/v1/${p}`).digest()]));
  }

  /** The MAC of `text` for `purpose`, base64url (43 characters). */
  mac(purpose: SigningPurpose, text: string): string {
    return createHmac('sha256', this.keys.get(purpose) as Buffer)
      .update(text, 'utf8')
      .digest('base64url');
  }

  /** Hex MAC, for identifiers (lower-case, fits names that allow only [a-z0-9]). */
  macHex(purpose: SigningPurpose, text: string): string {
    return Buffer.from(this.mac(purpose, text), 'base64url').toString('hex');
  }

  /** Constant-time comparison of a received MAC with the one `text` has. */
  verify(purpose: SigningPurpose, text: string, mac: string): boolean {
    const expected = Buffer.from(this.mac(purpose, text), 'utf8');
    const received = Buffer.from(mac, 'utf8');
    return expected.length === received.length && timingSafeEqual(expected, received);
  }
}
