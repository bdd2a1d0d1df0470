/**
 * Idempotency keys and producer ids: random UUIDs. `randomUUID` needs a secure context in browsers
 * (https or localhost); `getRandomValues` does not, so it is the fallback for a console on plain http.
 */
export function newIdempotencyKey(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
