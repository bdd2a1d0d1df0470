/**
 * The Damm check digit (H. Michael Damm, 2004). Its table is a totally anti-symmetric quasigroup of
 * order 10, which is exactly what makes it catch every single-digit substitution and every
 * transposition of two adjacent digits — the two mistakes people make reading a number aloud or
 * typing it in. Unlike Luhn it needs no weights and catches 09↔90 too.
 *
 * Leading zeros do not change the digit (row 0 maps 0 to 0), so a padded and an unpadded number
 * share their check digit.
 */
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

/** The quasigroup operation, exported so tests can check the table's defining properties. */
export function dammStep(interim: number, digit: number): number {
  const value = table[interim]?.[digit];
  if (value === undefined) throw new RangeError(`Damm step out of range: ${interim}, ${digit}`);
  return value;
}

function interimOf(digits: string): number {
  let interim = 0;
  for (let i = 0; i < digits.length; i++) {
    const digit = digits.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) throw new RangeError(`Not a digit string: ${JSON.stringify(digits)}`);
    interim = dammStep(interim, digit);
  }
  return interim;
}

/** The check digit for a string of decimal digits. */
export function dammCheckDigit(digits: string): number {
  return interimOf(digits);
}
