/**
 * Whether a credential is revoked, as every request that presents one asks (shared/identity/credentials.ts):
 * one point read of the `callers` table's revocation row, then trusted for
 * TALLYHO_CREDENTIALS_REVOCATION_CACHE_SECONDS. That is the bound docs/security.md states: a
 * credential revoked on one instance is refused there at once and on every other instance once its
 * look expires. Only verified credentials get here (the signature is checked first), so a caller
 * cannot fill the cache with junk ids; it is bounded all the same, and a full cache starts over.
 */
import type { Clock } from '../clock';

const maxEntries = 10_000;

export class Revocations {
  private readonly seen = new Map<string, { readonly revoked: boolean; readonly until: number }>();

  constructor(
    private readonly read: (credentialId: string) => Promise<boolean>,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  async isRevoked(credentialId: string): Promise<boolean> {
    const now = this.clock.now();
    const known = this.seen.get(credentialId);
    if (known !== undefined && (known.revoked || known.until > now)) return known.revoked;
    const revoked = await this.read(credentialId);
    if (this.seen.size >= maxEntries) this.seen.clear();
    this.seen.set(credentialId, { revoked, until: now + this.ttlMs });
    return revoked;
  }

  /** A revocation made on this instance holds here at once. */
  revoked(credentialId: string): void {
    this.seen.set(credentialId, { revoked: true, until: Number.POSITIVE_INFINITY });
  }
}
