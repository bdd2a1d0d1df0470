import { seededRandom } from '../../../shared/clock';
import { dammCheckDigit } from '../../../shared/sequences/damm';
import { defaultDefinition, maxSequenceValue, type SequenceDefinition } from '../../../shared/sequences/definition';
import { formatNumber, validateFormatted } from '../../../shared/sequences/format';

const orders: SequenceDefinition = { ...defaultDefinition, prefix: 'ORD-', width: 7, checkDigit: true, start: 1 };

describe('formatting sequence numbers', () => {
  it('writes prefix, zero-padded digits and a Damm check digit', () => {
    expect(formatNumber(orders, 12345)).toBe(`ORD-0012345-${dammCheckDigit('12345')}`);
    expect(formatNumber({ ...orders, checkDigit: false }, 42)).toBe('ORD-0000042');
    expect(formatNumber({ ...orders, prefix: '' }, 7)).toBe(`0000007-${dammCheckDigit('7')}`);
  });

  it('writes numbers wider than the width in full', () => {
    expect(formatNumber({ ...orders, width: 3 }, 123456)).toBe(`ORD-123456-${dammCheckDigit('123456')}`);
  });

  it('formats and validates round trip over a generated sample, for several shapes', () => {
    const random = seededRandom(7);
    const shapes: SequenceDefinition[] = [
      orders,
      { ...orders, checkDigit: false },
      { ...orders, prefix: '', width: 1 },
      { ...orders, width: 16 },
    ];
    const failures: string[] = [];
    for (const shape of shapes) {
      for (let i = 0; i < 500; i++) {
        const n = Math.floor(random() * 10 ** (1 + Math.floor(random() * 15)));
        if (n < shape.start) continue;
        const text = formatNumber(shape, n);
        const outcome = validateFormatted(shape, text);
        if (!outcome.valid || outcome.number !== n) failures.push(`${text}: ${JSON.stringify(outcome)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('validating typed-in numbers', () => {
  const good = formatNumber(orders, 12345);
  const reason = (text: string, settings: SequenceDefinition = orders): string | undefined => {
    const outcome = validateFormatted(settings, text);
    return outcome.valid ? undefined : outcome.reason;
  };

  it('accepts a number it formatted, and the prefix in either letter case', () => {
    expect(validateFormatted(orders, good)).toEqual({ valid: true, number: 12345 });
    expect(validateFormatted(orders, good.toLowerCase())).toEqual({ valid: true, number: 12345 });
  });

  it('explains each way a number can be malformed', () => {
    expect(reason('INV-0012345-1')).toMatch(/prefix "ORD-"/);
    expect(reason('ORD-0012345')).toMatch(/no check digit/);
    expect(reason('ORD-0012345-')).toMatch(/no check digit/);
    expect(reason('ORD-00123x5-1')).toMatch(/digits only/);
    expect(reason('ORD-0012345-x')).toMatch(/check digit must be a digit/);
    expect(reason(`ORD-12345-${dammCheckDigit('12345')}`)).toMatch(/at least 7/);
    expect(reason(`ORD-00012345-${dammCheckDigit('12345')}`)).toMatch(/leading zeros/);
    expect(reason('ORD--1')).toMatch(/digits only/);
    expect(reason('')).toMatch(/prefix/);
  });

  it('rejects a wrong check digit: a one-digit typo and a swap of neighbours', () => {
    const check = dammCheckDigit('0012345');
    expect(reason(`ORD-0012345-${(check + 1) % 10}`)).toMatch(/check digit is wrong/);
    expect(reason(`ORD-0013245-${check}`)).toMatch(/check digit is wrong/);
    expect(reason(`ORD-0012346-${check}`)).toMatch(/check digit is wrong/);
  });

  it('rejects numbers the sequence cannot issue', () => {
    const from100 = { ...orders, start: 100 };
    expect(reason(formatNumber(from100, 99), from100)).toMatch(/below the first number/);
    const huge = String(maxSequenceValue + 1);
    expect(reason(`ORD-${huge}-${dammCheckDigit(huge)}`)).toMatch(/larger than any number/);
  });

  it('checks numbers without a check digit by shape alone', () => {
    const plain = { ...orders, checkDigit: false };
    expect(validateFormatted(plain, 'ORD-0000042')).toEqual({ valid: true, number: 42 });
    expect(reason('ORD-0000042-3', plain)).toMatch(/digits only/);
  });
});
