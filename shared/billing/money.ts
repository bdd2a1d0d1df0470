/**
 * Integer money arithmetic. Amounts are integers of minor units (cents, yen, fils); rates are parts
 * per million. Tax is rounded once per transaction, half to even on minor units (banker's
 * rounding: no bias over many lines), symmetrically for negative amounts (refunds). Totals are
 * sums of the rounded lines, so an invoice always adds up line by line.
 */

const million = 1_000_000n;

/** round_half_even(amountMinor × ratePpm / 1,000,000), exactly (BigInt, no floating point). */
export function taxMinor(amountMinor: number, ratePpm: number): number {
  const product = BigInt(amountMinor) * BigInt(ratePpm);
  let quotient = product / million; // truncates toward zero
  const remainder = product % million; // same sign as product
  const twice = 2n * (remainder < 0n ? -remainder : remainder);
  if (twice > million || (twice === million && quotient % 2n !== 0n)) quotient += product < 0n ? -1n : 1n;
  return Number(quotient);
}

/** Minor units as a decimal in major units: (123456, 2) -> "1234.56"; (-5, 2) -> "-0.05"; (1500, 0) -> "1500". */
export function formatMinor(amount: bigint, exponent: number): string {
  const negative = amount < 0n;
  const digits = (negative ? -amount : amount).toString().padStart(exponent + 1, '0');
  const major = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return negative ? `-${major}` : major;
}
