/** Batch ids and carrier keys as the retry lanes carry them (shared/jobs/delivery/carrierIds.ts). */
import { carriedIdOf, keyedId, newCarrierKey, partId } from '../../../shared/jobs/delivery/carrierIds';
import { wireSchema } from '../../../shared/jobs/envelopes/wire';

describe('carrier ids', () => {
  it('reads the batch and the key back from a keyed id, and a queue id as a batch without a key', () => {
    const key = newCarrierKey();
    expect(key).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(carriedIdOf(keyedId('0.3', key))).toEqual({ batch: '0.3', key });
    expect(carriedIdOf('0.3')).toEqual({ batch: '0.3', key: undefined });
    expect(newCarrierKey()).not.toBe(key);
  });

  it('keeps every keyed id within the 64 characters the wire allows, parts of parts included, and distinct', () => {
    let batch = '12.4077';
    const seen = new Set<string>([batch]);
    for (let depth = 0; depth < 40; depth++) {
      batch = partId(batch, `r${depth + 2}`);
      expect(seen.has(batch)).toBe(false);
      seen.add(batch);
      const id = keyedId(batch, newCarrierKey());
      expect(id.length).toBeLessThanOrEqual(64);
      expect(wireSchema.shape.e.safeParse(id).success).toBe(true);
      expect(carriedIdOf(id).batch).toBe(batch);
    }
    // Two parts of one batch never share an id, short or hashed.
    expect(partId(batch, 'k3')).not.toBe(partId(batch, 'r3'));
    expect(partId('0.1', 'k3')).not.toBe(partId('0.1', 'r3'));
  });

  it('fits an id of an earlier version longer than a key leaves room for, the same way wherever it is read', () => {
    const long = `${'0.1:s2'.padEnd(56, '9')}:s7`;
    const { batch } = carriedIdOf(long);
    expect(batch.length).toBeLessThanOrEqual(47);
    expect(carriedIdOf(keyedId(long, newCarrierKey())).batch).toBe(batch);
  });
});
