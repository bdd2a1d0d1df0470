import { base64Length, type Envelope, type EnvelopeItem, isClaimCheck } from '../../../shared/jobs/envelopes/envelope';
import { envelopeJson, fromWire, itemJson, wireSchema } from '../../../shared/jobs/envelopes/wire';
import { openEnvelope, sealEnvelope, sealOverheadBytes } from '../../../shared/jobs/envelopes/seal';
import { Signer } from '../../../shared/signing/signer';
import { buildInput, entryFor, parseInput } from '../../../shared/jobs/envelopes/input';
import { pack, queueIndexFor } from '../../../shared/jobs/envelopes/packing';
import { maxEnvelopeJsonBytes } from '../../../shared/jobs/envelopes/seal';
import { seededRandom } from '../../../shared/clock';

const header = { jobId: '20260301120000-0123456789', processor: 'billing', round: 0, jobItems: 10_000 };
const limits = { maxItems: 32, maxBytes: 48_000 };
const idFor = (k: number): string => `0.${k}`;
const queueMessageLimit = 64 * 1024;
const signer = new Signer(Buffer.alloc(32, 7));

function entries(items: readonly { id: string }[], claimCheckBytes = 8192): EnvelopeItem[] {
  const input = buildInput(items);
  return input.items.map((item) => entryFor(item, 1, claimCheckBytes, `jobs/${header.jobId}/input.ndjson`));
}

function tx(i: number, extra: Record<string, unknown> = {}) {
  return {
    id: `tx-${i}`,
    customerId: `c-${i % 17}`,
    amountMinor: 1000 + i,
    currency: 'EUR',
    taxCategory: 'standard',
    occurredAt: '2026-03-01T12:00:00Z',
    ...extra,
  };
}

describe('packing items into envelopes', () => {
  it('puts at most 32 small items in an envelope, in order, and every item exactly once', () => {
    const list = entries(Array.from({ length: 1000 }, (_, i) => tx(i)));
    const envelopes = pack(header, list, limits, idFor);
    expect(envelopes).toHaveLength(Math.ceil(1000 / 32));
    expect(envelopes.every((e) => e.items.length <= 32)).toBe(true);
    expect(envelopes.flatMap((e) => e.items.map((x) => x.id))).toEqual(list.map((x) => x.id));
    expect(envelopes.map((e) => e.envelopeId)).toEqual(envelopes.map((_, k) => `0.${k}`));
  });

  it('closes an envelope at the byte limit: never above it, and the next item would not have fitted', () => {
    // ~5 KB items: the byte limit binds long before 32 items.
    const list = entries(
      Array.from({ length: 200 }, (_, i) => tx(i, { description: 'x'.repeat(900), metadata: { blob: 'y'.repeat(4000 + (i % 7) * 100) } })),
    );
    const envelopes = pack(header, list, limits, idFor);
    for (const [k, envelope] of envelopes.entries()) {
      const bytes = Buffer.byteLength(envelopeJson(envelope));
      expect(bytes).toBeLessThanOrEqual(limits.maxBytes);
      const next = envelopes[k + 1]?.items[0];
      if (next !== undefined) expect(bytes + 1 + Buffer.byteLength(itemJson(next))).toBeGreaterThan(limits.maxBytes);
    }
    expect(envelopes.length).toBeGreaterThan(200 / 32);
  });

  it('counts UTF-8 bytes, not characters, and escapes: multi-byte and escaped text never overflows', () => {
    const random = seededRandom(7);
    const alphabet = ['a', 'é', '€', '𝄞', '"', '\\', '\n', '\u0001', '漢'];
    const text = (n: number): string => Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    const list = entries(
      Array.from({ length: 300 }, (_, i) => tx(i, { description: text(200 + Math.floor(random() * 800)) })),
      4000,
    );
    const envelopes = pack(header, list, limits, idFor);
    for (const envelope of envelopes) {
      const json = envelopeJson(envelope);
      expect(Buffer.byteLength(json)).toBeLessThanOrEqual(limits.maxBytes);
      expect(fromWire(wireSchema.parse(JSON.parse(json)))).toEqual(envelope);
    }
  });

  it('keeps the base64 message within the 64 KiB queue limit, even at the largest allowed envelope size', () => {
    expect(base64Length(maxEnvelopeJsonBytes + sealOverheadBytes)).toBe(queueMessageLimit);
    const list = entries(
      Array.from({ length: 400 }, (_, i) => tx(i, { description: '€'.repeat(1200 + i) })),
      32 * 1024,
    );
    const envelopes = pack(header, list, { maxItems: 32, maxBytes: maxEnvelopeJsonBytes }, idFor);
    for (const envelope of envelopes) {
      const message = Buffer.from(sealEnvelope(envelope, signer), 'utf8').toString('base64');
      expect(message.length).toBe(base64Length(Buffer.byteLength(envelopeJson(envelope)) + sealOverheadBytes));
      expect(message.length).toBeLessThanOrEqual(queueMessageLimit);
      expect(openEnvelope(Buffer.from(message, 'base64').toString('utf8'), signer)).toEqual({ ok: true, envelope });
    }
  });

  it('sends an item above the claim-check threshold as a reference to its bytes in the input file', () => {
    const items = [tx(1), tx(2, { metadata: { big: 'z'.repeat(20_000) } }), tx(3)];
    const input = buildInput(items);
    const list = input.items.map((item) => entryFor(item, 1, 8192, 'jobs/j/input.ndjson'));
    expect(list.map((e) => (isClaimCheck(e) ? 'claim' : 'inline'))).toEqual(['inline', 'claim', 'inline']);
    const big = list[1]!;
    if (!isClaimCheck(big)) throw new Error('not a claim check');
    const bytes = Buffer.from(input.text, 'utf8')
      .subarray(big.claimCheck.offset, big.claimCheck.offset + big.claimCheck.length)
      .toString('utf8');
    expect(JSON.parse(bytes)).toEqual(items[1]);
    // Three items, one envelope: the big one costs a few hundred bytes, not 20 KB.
    const [envelope] = pack(header, list, limits, idFor);
    expect(Buffer.byteLength(envelopeJson(envelope!))).toBeLessThan(2000);
  });

  it('rejects an entry that could never fit an envelope (a threshold misconfiguration), instead of sending it', () => {
    const list = entries([tx(1, { description: 'q'.repeat(60_000) })], 100_000);
    expect(() => pack(header, list, limits, idFor)).toThrow(/does not fit/);
  });

  it('writes the wire form it always has: one-letter keys in the order they are sealed in (v j e p r n t i; id a d, id a c; b o n h)', () => {
    const envelope: Envelope = {
      jobId: header.jobId,
      envelopeId: '1.4~2',
      processor: 'billing',
      round: 1,
      jobItems: 3,
      trace: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      items: [
        { id: 'tx-1', attempt: 2, data: { id: 'tx-1', amountMinor: 5 } },
        { id: 'tx-2', attempt: 1, claimCheck: { blob: 'jobs/j/input.ndjson', offset: 40, length: 12, sha256: 'a'.repeat(64) } },
      ],
    };
    expect(envelopeJson(envelope)).toBe(
      '{"v":1,"j":"20260301120000-0123456789","e":"1.4~2","p":"billing","r":1,"n":3,"t":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",' +
        `"i":[{"id":"tx-1","a":2,"d":{"id":"tx-1","amountMinor":5}},{"id":"tx-2","a":1,"c":{"b":"jobs/j/input.ndjson","o":40,"n":12,"h":"${'a'.repeat(64)}"}}]}`,
    );
    // Without a trace there is no `t`; and what is read back is the envelope that was written.
    const { trace: _trace, ...untraced } = envelope;
    expect(envelopeJson(untraced)).not.toContain('"t":');
    expect(fromWire(wireSchema.parse(JSON.parse(envelopeJson(envelope))))).toEqual(envelope);
  });

  it('reads an input file back to exactly the same items and offsets', () => {
    const input = buildInput([tx(1), tx(2, { description: 'ü€' }), tx(3)]);
    expect(parseInput(input.text)).toEqual(input);
    expect(() => parseInput(input.text.replace('"tx-2"', '"tx-2" '))).toThrow();
  });

  it('spreads a job over every work queue, round robin', () => {
    const queues = Array.from({ length: 8 }, (_, k) => queueIndexFor(header.jobId, k, 4));
    expect(new Set(queues)).toEqual(new Set([0, 1, 2, 3]));
    expect(queues.slice(0, 4)).toEqual(queues.slice(4));
  });
});
