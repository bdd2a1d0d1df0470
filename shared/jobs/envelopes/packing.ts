/**
 * Packs items into envelopes, in order, closing an envelope when the next item would pass the item or
 * byte limit. Sizes are exact: the byte count is the UTF-8 length of the envelope's JSON as it will
 * be sent (./wire.ts; base64 then adds a third on the queue).
 */
import { createHash } from 'node:crypto';

import type { Envelope, EnvelopeHeader, EnvelopeItem } from './envelope';
import { envelopeJson, itemJson } from './wire';

export interface PackLimits {
  readonly maxItems: number;
  /** Largest envelope JSON in bytes. */
  readonly maxBytes: number;
}

function utf8(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** An envelope with this header, id and items. */
function envelopeOf(header: EnvelopeHeader, envelopeId: string, items: EnvelopeItem[]): Envelope {
  const { trace, ...rest } = header;
  return { ...rest, envelopeId, ...(trace === undefined ? {} : { trace }), items };
}

/** JSON bytes of an envelope with this header and id but no items (`"i":[]`). */
function emptyEnvelopeBytes(header: EnvelopeHeader, id: string): number {
  return utf8(envelopeJson(envelopeOf(header, id, [])));
}

/**
 * Envelopes for `entries`; `idFor(k)` names the k-th. An item too big for an envelope on its own
 * is a bug upstream (the claim-check threshold keeps inline items small) and throws.
 */
export function pack(
  header: EnvelopeHeader,
  entries: readonly EnvelopeItem[],
  limits: PackLimits,
  idFor: (k: number) => string,
): Envelope[] {
  const envelopes: Envelope[] = [];
  let items: EnvelopeItem[] = [];
  let bytes = 0;
  const open = (): number => emptyEnvelopeBytes(header, idFor(envelopes.length));
  const close = (): void => {
    if (items.length === 0) return;
    envelopes.push(envelopeOf(header, idFor(envelopes.length), items));
    items = [];
  };
  bytes = open();
  for (const entry of entries) {
    const size = utf8(itemJson(entry));
    const comma = items.length > 0 ? 1 : 0;
    if (items.length >= limits.maxItems || bytes + comma + size > limits.maxBytes) {
      close();
      bytes = open();
      if (bytes + size > limits.maxBytes) {
        throw new Error(`Envelope entry ${entry.id} (${size} bytes) does not fit an envelope of ${limits.maxBytes} bytes`);
      }
      items.push(entry);
      bytes += size;
      continue;
    }
    items.push(entry);
    bytes += comma + size;
  }
  close();
  return envelopes;
}

/** Work queue (0…K-1) of a job's k-th envelope: round-robin from a start that depends on the job, so concurrent jobs spread. */
export function queueIndexFor(jobId: string, k: number, queues: number): number {
  const start = createHash('sha256').update(jobId).digest().readUInt32BE(0);
  return (start + k) % queues;
}
