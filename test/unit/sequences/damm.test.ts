import { seededRandom } from '../../../shared/clock';
import { dammCheckDigit, dammStep } from '../../../shared/sequences/damm';

/** The app's check of a typed number (shared/sequences/format.ts): its last digit is the Damm digit of the rest. */
function dammIsValid(digitsWithCheck: string): boolean {
  if (!/^[0-9]{2,}$/.test(digitsWithCheck)) return false;
  return String(dammCheckDigit(digitsWithCheck.slice(0, -1))) === digitsWithCheck.slice(-1);
}

const digits = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];

function sampleNumbers(count: number, seed: number): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const length = 1 + Math.floor(random() * 16);
    return Array.from({ length }, () => String(Math.floor(random() * 10))).join('');
  });
}

describe('Damm check digit', () => {
  it('uses a table that is a Latin square with a zero diagonal', () => {
    for (const row of digits) {
      expect(new Set(digits.map((col) => dammStep(row, col))).size).toBe(10);
      expect(new Set(digits.map((col) => dammStep(col, row))).size).toBe(10);
      expect(dammStep(row, row)).toBe(0);
    }
  });

  it('uses a weakly totally anti-symmetric table (what makes every adjacent transposition detectable)', () => {
    for (const c of digits) {
      for (const x of digits) {
        for (const y of digits) {
          if (x !== y) expect(dammStep(dammStep(c, x), y)).not.toBe(dammStep(dammStep(c, y), x));
        }
      }
    }
  });

  it('matches the published worked example (572 → 4) and ignores leading zeros', () => {
    expect(dammCheckDigit('572')).toBe(4);
    expect(dammIsValid('5724')).toBe(true);
    expect(dammCheckDigit('000572')).toBe(4);
  });

  const sample = sampleNumbers(3000, 20260101);

  it('accepts every number with its own check digit', () => {
    for (const n of sample) expect(dammIsValid(`${n}${dammCheckDigit(n)}`)).toBe(true);
  });

  it('detects every single-digit substitution, check digit included, over a generated sample', () => {
    let checked = 0;
    const missed: string[] = [];
    for (const n of sample) {
      const full = `${n}${dammCheckDigit(n)}`;
      for (let i = 0; i < full.length; i++) {
        for (const d of digits) {
          if (String(d) === full[i]) continue;
          const changed = `${full.slice(0, i)}${d}${full.slice(i + 1)}`;
          if (dammIsValid(changed)) missed.push(`${full} → ${changed}`);
          checked++;
        }
      }
    }
    expect(missed).toEqual([]);
    expect(checked).toBeGreaterThan(100_000);
  });

  it('detects every transposition of two different adjacent digits, over a generated sample', () => {
    let checked = 0;
    const missed: string[] = [];
    for (const n of sample) {
      const full = `${n}${dammCheckDigit(n)}`;
      for (let i = 0; i + 1 < full.length; i++) {
        if (full[i] === full[i + 1]) continue;
        const swapped = `${full.slice(0, i)}${full[i + 1]}${full[i]}${full.slice(i + 2)}`;
        if (dammIsValid(swapped)) missed.push(`${full} → ${swapped}`);
        checked++;
      }
    }
    expect(missed).toEqual([]);
    expect(checked).toBeGreaterThan(10_000);
  });

  it('rejects input that is not a digit string', () => {
    expect(() => dammCheckDigit('12a4')).toThrow(RangeError);
    expect(() => dammCheckDigit('-1')).toThrow(RangeError);
    expect(() => dammCheckDigit('12-3')).toThrow(RangeError);
  });
});
