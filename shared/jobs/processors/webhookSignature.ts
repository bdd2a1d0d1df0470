/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, "Signature scheme"): the signed
 * content is `<webhook-id>.<webhook-timestamp>.<body>`, signed with HMAC-SHA256 under the secret's
 * bytes (the base64 after `whsec_`), and sent as `webhook-signature: v1,<base64>`; during a rotation
 * both secrets sign, space-separated. The clients' verifiers check exactly this.
 */
import { createHmac } from 'node:crypto';

const secretPrefix = 'whsec_';

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret, 'base64');
}

export function webhookSignature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
}

/** The three headers of a push, signed with every secret given (the current one first). */
export function webhookHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => webhookSignature(s, id, timestamp, body)).join(' '),
  };
}
