import { isAppError } from '../../../shared/errors';
import {
  defaultDefinition,
  definitionDifferences,
  maxSequenceValue,
  resolveDefinition,
  sequenceSettingsInput,
} from '../../../shared/sequences/definition';
import { formattedParam, nextBody, sequenceParams } from '../../../shared/sequences/schemas';
import { parseStoredSequence } from '../../../shared/sequences/store';

const ok = (schema: { safeParse(v: unknown): { success: boolean } }, value: unknown): boolean => schema.safeParse(value).success;

describe('sequence request validation', () => {
  it('accepts names that are safe table keys and rejects the rest', () => {
    for (const name of ['orders', 'ORD-2026', 'a', 'x.y_z-1', 'a'.repeat(63)]) expect(ok(sequenceParams, { name })).toBe(true);
    for (const name of ['', 'a/b', 'a#b', 'a?b', 'a\\b', 'a b', '-lead', '.hidden', 'a'.repeat(64), 'tab\tname', 'ünï']) {
      expect(ok(sequenceParams, { name })).toBe(false);
    }
  });

  it('accepts counts 1 to 1000 as JSON integers and nothing else', () => {
    for (const body of [undefined, {}, { count: 1 }, { count: 1000 }]) expect(ok(nextBody, body)).toBe(true);
    for (const body of [
      { count: 0 },
      { count: 1001 },
      { count: 2.5 },
      { count: '3' },
      { count: -1 },
      { count: null },
      { other: 1 },
      null,
      [],
      3,
    ]) {
      expect(ok(nextBody, body)).toBe(false);
    }
  });

  it('accepts settings within their limits and fills in defaults', () => {
    expect(ok(sequenceSettingsInput, {})).toBe(true);
    const input = { prefix: 'ORD-', width: 7, checkDigit: true, start: 1000, blockSize: { min: 5, max: 50 }, refillTargetSeconds: 30 };
    expect(ok(sequenceSettingsInput, input)).toBe(true);
    expect(resolveDefinition({ prefix: 'X' })).toEqual({ ...defaultDefinition, prefix: 'X' });
  });

  it.each([
    ['an unknown field', { widht: 7 }],
    ['an unknown blockSize field', { blockSize: { minimum: 1 } }],
    ['a negative start', { start: -1 }],
    ['a fractional width', { width: 2.5 }],
    ['width 0', { width: 0 }],
    ['width 17', { width: 17 }],
    ['a prefix with a slash', { prefix: 'A/B' }],
    ['a prefix with a space', { prefix: 'A B' }],
    ['a 21-character prefix', { prefix: 'P'.repeat(21) }],
    ['checkDigit as a string', { checkDigit: 'yes' }],
    ['blockSize.min above blockSize.max', { blockSize: { min: 100, max: 10 } }],
    ['blockSize.min above the default max', { blockSize: { min: 200_000 } }],
    ['blockSize 0', { blockSize: { min: 0 } }],
    ['blockSize above a million', { blockSize: { max: 1_000_001 } }],
    ['refillTargetSeconds 0', { refillTargetSeconds: 0 }],
    ['a start whose first block would pass MAX_SAFE_INTEGER', { start: maxSequenceValue - 50, blockSize: { min: 10, max: 100 } }],
    ['a start above MAX_SAFE_INTEGER', { start: maxSequenceValue + 1 }],
  ])('rejects %s', (_label, input) => {
    expect(ok(sequenceSettingsInput, input)).toBe(false);
  });

  it('allows a start whose first block ends exactly at MAX_SAFE_INTEGER', () => {
    expect(ok(sequenceSettingsInput, { start: maxSequenceValue - 99, blockSize: { min: 10, max: 100 } })).toBe(true);
  });

  it('refuses only unsafe typed-in numbers; malformed ones are for the handler to explain', () => {
    for (const text of ['ORD-0012345-7', 'garbage', 'ünïcode', '../..', 'a b']) expect(ok(formattedParam, text)).toBe(true);
    for (const text of ['', 'a\u0000b', 'line\nbreak', 'x\u007f', 'x'.repeat(101)]) expect(ok(formattedParam, text)).toBe(false);
  });

  it('names the fields a repeated PUT changes, ignoring fields it leaves out', () => {
    const existing = { ...defaultDefinition, prefix: 'ORD-' };
    expect(definitionDifferences(existing, {})).toEqual([]);
    expect(definitionDifferences(existing, { prefix: 'ORD-', width: 7 })).toEqual([]);
    expect(definitionDifferences(existing, { prefix: 'INV-', blockSize: { max: 5 } })).toEqual([
      { field: 'prefix', existing: 'ORD-', requested: 'INV-' },
      { field: 'blockSize.max', existing: 100_000, requested: 5 },
    ]);
  });
});

describe('stored sequence parsing', () => {
  const stored = {
    etag: 'W/"1"',
    next: BigInt(42),
    start: BigInt(1),
    prefix: 'ORD-',
    width: 7,
    checkDigit: true,
    blockMin: 10,
    blockMax: 1000,
    refillTargetSeconds: 10,
    lastWrite: 'abc:1',
  };

  it('reads what the store writes', () => {
    expect(parseStoredSequence('orders', stored)).toMatchObject({ name: 'orders', next: 42, definition: { start: 1, prefix: 'ORD-' } });
    expect(parseStoredSequence('orders', { ...stored, next: 42 }).next).toBe(42);
  });

  it.each([
    ['a non-numeric high-water mark', { next: 'abc' }, 'stored.next'],
    ['a negative high-water mark', { next: BigInt(-5) }, 'stored.next'],
    ['a fractional high-water mark', { next: 4.5 }, 'stored.next'],
    ['a high-water mark past MAX_SAFE_INTEGER + 1', { next: BigInt(maxSequenceValue) + BigInt(2) }, 'stored.next'],
    ['a missing high-water mark', { next: undefined }, 'stored.next'],
    ['a missing width', { width: undefined }, 'stored.width'],
    ['a block minimum above its maximum', { blockMin: 2000 }, 'stored.blockSize.min'],
  ])('reports %s as CorruptState naming the sequence', (_label, change, path) => {
    const err = ((): unknown => {
      try {
        parseStoredSequence('orders', { ...stored, ...change });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(isAppError(err) && err.code).toBe('CorruptState');
    expect(isAppError(err) && err.message).toContain('"orders"');
    expect(isAppError(err) && err.issues.map((i) => i.path)).toContain(path);
  });

  it('reports a high-water mark below start as CorruptState', () => {
    expect(() => parseStoredSequence('orders', { ...stored, start: BigInt(100), next: BigInt(50) })).toThrow(/"orders".*below start/);
  });
});
