/**
 * What goes on a work queue: `{"s": MAC, "m": envelope}`, the MAC (HMAC-SHA256, the `envelope`
 * subkey) taken over the envelope's JSON. Anyone who can write to a work queue — a schedule target,
 * an operator's tool — could otherwise hand the processor an envelope naming another caller's job
 * and items; the processor and the poison handler act only on envelopes this app sealed.
 *
 * The MAC covers `JSON.stringify` of the envelope. On receipt it is checked on the text itself, before
 * anything is parsed (the seal's layout is fixed), so an envelope the app sealed always opens: its
 * depth and size were budgeted at submit (`envelopeNesting`), and even one that no longer passes the
 * schema is known to be authentic, so its items can be recorded as failed instead of being dropped.
 * Text in any other layout (the Functions library hands a JSON message over parsed and it is
 * re-serialised) is depth-checked, parsed and its envelope re-serialised for the MAC.
 */
import { jsonDeeperThan, maxJsonDepth } from '../../jsonDepth';
import type { Signer } from '../../signing/signer';
import type { Envelope } from './envelope';
import { envelopeJson, fromWire, type UnreadableEnvelope, unreadableOf, wireSchema } from './wire';

/** Bytes the seal adds around the envelope JSON: `{"s":"` + 43 + `","m":` + `}`. */
export const sealOverheadBytes = 56;

/** A storage queue message holds 64 KiB; base64 (the trigger's default encoding) makes 3 bytes 4. */
const queueMessageBase64Capacity = ((64 * 1024) / 4) * 3;

/** The largest envelope JSON whose sealed base64 form fills the 64 KiB queue message exactly. */
export const maxEnvelopeJsonBytes = queueMessageBase64Capacity - sealOverheadBytes;

/**
 * Levels the seal and the envelope put around an item's own JSON: the seal object, the envelope,
 * the item array, the entry. An item may nest at most `maxJsonDepth - envelopeNesting` deep (checked
 * at submit), so every envelope the app seals is within the depth any reader of it accepts.
 */
const envelopeNesting = 4;

/** The deepest an item may nest, counting its own object as 1. */
export const maxItemDepth = maxJsonDepth - envelopeNesting;

const sealPrefix = '{"s":"';
const macChars = 43;
const sealMiddle = '","m":';

export function sealEnvelope(envelope: Envelope, signer: Signer): string {
  const json = envelopeJson(envelope);
  return `{"s":"${signer.mac('envelope', json)}","m":${json}}`;
}

export type Opened =
  | { readonly ok: true; readonly envelope: Envelope }
  | { readonly ok: false; readonly reason: string; readonly authentic?: UnreadableEnvelope };

function openAuthentic(json: string): Opened {
  let m: unknown;
  try {
    m = JSON.parse(json);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const parsed = wireSchema.safeParse(m);
  if (parsed.success) return { ok: true, envelope: fromWire(parsed.data) };
  const header = unreadableOf(m);
  const reason = 'an envelope of this app that this version cannot process';
  return header === undefined ? { ok: false, reason } : { ok: false, reason, authentic: header };
}

export function openEnvelope(text: string, signer: Signer): Opened {
  if (text.startsWith(sealPrefix) && text.slice(sealPrefix.length + macChars).startsWith(sealMiddle) && text.endsWith('}')) {
    const mac = text.slice(sealPrefix.length, sealPrefix.length + macChars);
    const json = text.slice(sealPrefix.length + macChars + sealMiddle.length, -1);
    if (signer.verify('envelope', json, mac)) return openAuthentic(json);
  }
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
  const parsed = wireSchema.safeParse(m);
  return parsed.success ? { ok: true, envelope: fromWire(parsed.data) } : { ok: false, reason: 'not an envelope this version understands' };
}
