/**
 * Verifies a webhook processor's push, per the Standard Webhooks specification: the signed content is
 * `<webhook-id>.<webhook-timestamp>.<raw body>`, HMAC-SHA256 under the secret's bytes (the base64
 * after `whsec_`), in `webhook-signature` as space-separated `v1,<base64>` (two during a rotation).
 * The timestamp must be within `toleranceSeconds` of now, so a captured push cannot be replayed later.
 * WebCrypto, so it runs in Node 20+ and in browsers and edge runtimes alike.
 */
export interface WebhookHeaders {
  get(name: string): string | null | undefined;
}

export interface VerifyOptions {
  /** `whsec_…`, as the processor's declaration (or rotation) answered it. */
  readonly secret: string;
  /** The request's headers (a Headers, or anything with `get`), or a plain object of them. */
  readonly headers: WebhookHeaders | Readonly<Record<string, string | string[] | undefined>>;
  /** The body exactly as received, before any JSON parsing. */
  readonly body: string;
  /** Default 300 (five minutes, as the specification suggests). */
  readonly toleranceSeconds?: number;
  /** Seconds since the epoch (default now). */
  readonly now?: number;
}

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

function header(headers: VerifyOptions['headers'], name: string): string | undefined {
  if (typeof (headers as WebhookHeaders).get === 'function') return (headers as WebhookHeaders).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | string[] | undefined>>;
  const value = Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(new ArrayBuffer(binary.length));
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function bytesToBase64(bytes: ArrayBuffer): string {
  return btoa(String.fromCharCode(...new Uint8Array(bytes)));
}

/** Constant time in the length of `a`: no early exit tells how much of a signature matched. */
function sameText(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i % Math.max(1, b.length));
  return diff === 0;
}

/** Resolves with the parsed body when the push is authentic and fresh; rejects with WebhookVerificationError otherwise. */
export async function verifyWebhook<T = unknown>(options: VerifyOptions): Promise<T> {
  const id = header(options.headers, 'webhook-id');
  const timestamp = header(options.headers, 'webhook-timestamp');
  const signatures = header(options.headers, 'webhook-signature');
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    throw new WebhookVerificationError('The webhook-id, webhook-timestamp and webhook-signature headers are required');
  }
  const sent = Number(timestamp);
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (!/^\d+$/.test(timestamp) || Math.abs(now - sent) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('The webhook-timestamp is missing, malformed or too far from now');
  }
  const secret = options.secret.startsWith('whsec_') ? options.secret.slice('whsec_'.length) : options.secret;
  const key = await crypto.subtle.importKey('raw', base64ToBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = bytesToBase64(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestamp}.${options.body}`)));
  const expected = `v1,${mac}`;
  const matched = signatures.split(' ').some((s) => sameText(s, expected));
  if (!matched) throw new WebhookVerificationError('No signature matches');
  return JSON.parse(options.body) as T;
}
