/**
 * What goes on a work queue: `{"s": MAC, "m": envelope}`, the MAC (HMAC-SHA256, the `envelope`
 * subkey) taken over the envelope's JSON. Anyone who can write to a work queue — a schedule target,
 * an operator's tool — could otherwise hand the processor an envelope naming another caller's job
 * and items; the processor and the poison handler act only on envelopes this app sealed.
 *
 * The MAC covers `JSON.stringify` of the envelope, recomputed from the parsed message on receipt:
 * the Functions library hands a JSON queue message over parsed, and re-serialising JSON that
 * `JSON.stringify` produced gives back the same text.
 */
import { jsonDeeperThan } from '../jsonDepth';
import type { Signer } from '../signing/signer';
import { type Envelope, envelopeJson, envelopeSchema } from './envelope';

/** Bytes the seal adds around the envelope JSON: `{"s":"` + 43 + `","m":` + `}`. */
export const sealOverheadBytes = 56;

/** A storage queue message holds 64 KiB; base64 (the trigger's default encoding) makes 3 bytes 4. */
const queueMessageBase64Capacity = ((64 * 1024) / 4) * 3;

/** The largest envelope JSON whose sealed base64 form fills the 64 KiB queue message exactly. */
export const maxEnvelopeJsonBytes = queueMessageBase64Capacity - sealOverheadBytes;

export function sealEnvelope(envelope: Envelope, signer: Signer): string {
  const json = envelopeJson(envelope);
  return `{"s":"${signer.mac('envelope', json)}","m":${json}}`;
}

export type Opened = { readonly ok: true; readonly envelope: Envelope } | { readonly ok: false; readonly reason: string };

export function openEnvelope(text: string, signer: Signer): Opened {
  if (jsonDeeperThan(text)) return { ok: false, reason: 'nested too deeply' };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, reason: 'not a sealed envelope' };
  const { s, m, ...rest } = raw as Record<string, unknown>;
  if (typeof s !== 'string' || typeof m !== 'object' || m === null || Object.keys(rest).length > 0) {
    return { ok: false, reason: 'not a sealed envelope (unsigned)' };
  }
  if (!signer.verify('envelope', JSON.stringify(m), s)) return { ok: false, reason: 'the seal does not match (forged or altered)' };
  const parsed = envelopeSchema.safeParse(m);
  return parsed.success ? { ok: true, envelope: parsed.data } : { ok: false, reason: 'not an envelope this version understands' };
}
