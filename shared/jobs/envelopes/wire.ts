/**
 * The envelope's wire form, the codec at the edge: what is sealed and sent on a queue is
 * `toWire(envelope)`'s JSON, and what is received is checked against `wireSchema` and read back with
 * `fromWire`. Keys are one letter because every byte counts four-thirds once the host's base64 is
 * applied; the order of the keys is part of the format (the seal is a MAC over the JSON text), so it
 * is written down here once: `v j e p r n t i`, an item `id a d` or `id a c`, a claim check `b o n h`.
 */
import * as z from 'zod';

import { traceparentSchema } from '../../telemetry/traceContext';
import type { ClaimCheck, Envelope, EnvelopeItem } from './envelope';
import { itemId, jobId } from './ids';

const envelopeVersion = 1;

const jsonValue = z.json();

const claimCheckSchema = z.strictObject({
  b: z.string().min(1).max(1024),
  o: z.number().int().min(0),
  n: z.number().int().min(1),
  h: z.string().regex(/^[0-9a-f]{64}$/),
});

const attempt = z.number().int().min(1);

const entrySchema = z.union([
  z.strictObject({ id: itemId, a: attempt, d: z.record(z.string(), jsonValue) }),
  z.strictObject({ id: itemId, a: attempt, c: claimCheckSchema }),
]);

export const wireSchema = z.strictObject({
  v: z.literal(envelopeVersion),
  j: jobId,
  e: z.string().min(1).max(64),
  p: z.string().min(1).max(32),
  r: z.number().int().min(0),
  n: z.number().int().min(1),
  /** Under the seal, so no queue writer can graft an envelope onto another trace. */
  t: traceparentSchema.optional(),
  i: z.array(entrySchema).min(1),
});

type WireEnvelope = z.output<typeof wireSchema>;
type WireEntry = z.output<typeof entrySchema>;

function claimCheckToWire(c: ClaimCheck): z.output<typeof claimCheckSchema> {
  return { b: c.blob, o: c.offset, n: c.length, h: c.sha256 };
}

function itemToWire(item: EnvelopeItem): WireEntry {
  return 'claimCheck' in item
    ? { id: item.id, a: item.attempt, c: claimCheckToWire(item.claimCheck) }
    : { id: item.id, a: item.attempt, d: item.data };
}

function itemFromWire(entry: WireEntry): EnvelopeItem {
  if ('c' in entry) {
    const { b, o, n, h } = entry.c;
    return { id: entry.id, attempt: entry.a, claimCheck: { blob: b, offset: o, length: n, sha256: h } };
  }
  return { id: entry.id, attempt: entry.a, data: entry.d };
}

function toWire(envelope: Envelope): WireEnvelope {
  return {
    v: envelopeVersion,
    j: envelope.jobId,
    e: envelope.envelopeId,
    p: envelope.processor,
    r: envelope.round,
    n: envelope.jobItems,
    ...(envelope.trace === undefined ? {} : { t: envelope.trace }),
    i: envelope.items.map(itemToWire),
  };
}

export function fromWire(wire: WireEnvelope): Envelope {
  return {
    jobId: wire.j,
    envelopeId: wire.e,
    processor: wire.p,
    round: wire.r,
    jobItems: wire.n,
    ...(wire.t === undefined ? {} : { trace: wire.t }),
    items: wire.i.map(itemFromWire),
  };
}

/** The envelope's JSON as it is sealed and sent. */
export function envelopeJson(envelope: Envelope): string {
  return JSON.stringify(toWire(envelope));
}

/** The JSON of one item as the envelope carries it (packing measures envelopes with it). */
export function itemJson(item: EnvelopeItem): string {
  return JSON.stringify(itemToWire(item));
}

/** What an authentic envelope that cannot be processed still tells: whose items to record as failed. */
export interface UnreadableEnvelope {
  readonly jobId: string;
  readonly envelopeId: string;
  readonly round: number;
  readonly jobItems: number;
  readonly itemIds: readonly string[];
}

/** The fields of an authentic envelope the schema refused, when they are there to be read. */
export function unreadableOf(m: unknown): UnreadableEnvelope | undefined {
  if (typeof m !== 'object' || m === null) return undefined;
  const { j, e, r, n, i } = m as Record<string, unknown>;
  if (typeof j !== 'string' || typeof e !== 'string' || typeof r !== 'number' || typeof n !== 'number' || !Array.isArray(i))
    return undefined;
  const itemIds = i.flatMap((entry: unknown) => {
    const id = typeof entry === 'object' && entry !== null ? (entry as { id?: unknown }).id : undefined;
    return typeof id === 'string' ? [id] : [];
  });
  return { jobId: j, envelopeId: e, round: r, jobItems: n, itemIds };
}
