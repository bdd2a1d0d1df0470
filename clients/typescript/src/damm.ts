/**
 * Damm check digits, and the check of a typed-in number against a sequence's format, done locally:
 * a form can reject `ORD-0012354-7` (two digits swapped) before anything is sent. The rules match
 * the server's `GET /sequences/{name}/validate/{formatted}`.
 */
import type { SequenceSettings } from './types.js';

// The weakly totally anti-symmetric quasigroup of order 10 from Damm's thesis (2004).
const table: readonly (readonly number[])[] = [
  [0, 3, 1, 7, 5, 9, 8, 6, 4, 2],
  [7, 0, 9, 2, 1, 5, 4, 8, 6, 3],
  [4, 2, 0, 6, 8, 7, 1, 3, 5, 9],
  [1, 7, 5, 0, 9, 8, 3, 4, 2, 6],
  [6, 1, 2, 3, 0, 4, 5, 9, 7, 8],
  [3, 6, 7, 4, 2, 0, 9, 5, 8, 1],
  [5, 8, 6, 9, 7, 2, 0, 1, 3, 4],
  [8, 9, 4, 5, 3, 6, 2, 0, 1, 7],
  [9, 4, 3, 8, 6, 1, 7, 2, 0, 5],
  [2, 5, 8, 1, 4, 3, 6, 7, 9, 0],
];

export function dammCheckDigit(digits: string): number {
  let interim = 0;
  for (const c of digits) interim = table[interim]?.[c.charCodeAt(0) - 48] ?? Number.NaN;
  if (Number.isNaN(interim)) throw new RangeError(`not digits: ${digits}`);
  return interim;
}

export type Validation = { readonly valid: true; readonly number: number } | { readonly valid: false; readonly reason: string };

type Format = Pick<SequenceSettings, 'prefix' | 'width' | 'checkDigit' | 'start'>;

const invalid = (reason: string): Validation => ({ valid: false, reason });

export function validateFormatted(format: Format, text: string): Validation {
  const { prefix, width, checkDigit, start } = format;
  if (text.slice(0, prefix.length).toUpperCase() !== prefix.toUpperCase()) return invalid(`does not start with the prefix "${prefix}"`);
  let digits = text.slice(prefix.length);
  let check: string | undefined;
  if (checkDigit) {
    const dash = digits.lastIndexOf('-');
    if (dash < 0 || dash !== digits.length - 2) return invalid('has no check digit (expected "-" and one digit at the end)');
    check = digits.slice(dash + 1);
    digits = digits.slice(0, dash);
  }
  if (!/^[0-9]+$/.test(digits)) return invalid('the number part must be digits only');
  if (check !== undefined && !/^[0-9]$/.test(check)) return invalid('the check digit must be a digit');
  if (digits.length < width) return invalid(`has ${digits.length} digits; numbers of this sequence have at least ${width}`);
  if (digits.length > width && digits.startsWith('0')) return invalid(`has leading zeros beyond the width of ${width}`);
  if (check !== undefined && String(dammCheckDigit(digits)) !== check) return invalid('the check digit is wrong');
  const value = Number(digits);
  if (!Number.isSafeInteger(value)) return invalid('is larger than any number a sequence issues');
  if (value < start) return invalid(`is below the first number of this sequence (${start})`);
  return { valid: true, number: value };
}
