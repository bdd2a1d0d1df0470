/**
 * How a number is written (`ORD-0012345-9`: prefix, zero-padded digits, `-`, Damm check digit) and
 * how a typed number is checked against that shape.
 */
import { dammCheckDigit } from './damm';
import { maxSequenceValue, type SequenceDefinition } from './definition';

type FormatSettings = Pick<SequenceDefinition, 'prefix' | 'width' | 'checkDigit'>;

export function formatNumber(settings: FormatSettings, value: number): string {
  const digits = String(value).padStart(settings.width, '0');
  return settings.checkDigit ? `${settings.prefix}${digits}-${dammCheckDigit(digits)}` : `${settings.prefix}${digits}`;
}

export type ValidationOutcome = { readonly valid: true; readonly number: number } | { readonly valid: false; readonly reason: string };

function invalid(reason: string): ValidationOutcome {
  return { valid: false, reason };
}

/**
 * Whether `text` is a well-formed number of a sequence with these settings: the prefix (letter case
 * ignored, people type it either way), the digits in canonical form, the check digit, and a value
 * the sequence can issue. Whether the number was actually handed out is not something a sequence
 * records.
 */
export function validateFormatted(settings: Pick<SequenceDefinition, 'start'> & FormatSettings, text: string): ValidationOutcome {
  const { prefix, width, checkDigit, start } = settings;
  if (text.slice(0, prefix.length).toUpperCase() !== prefix.toUpperCase()) {
    return invalid(`does not start with the prefix "${prefix}"`);
  }
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
  if (!Number.isSafeInteger(value) || value > maxSequenceValue) return invalid('is larger than any number a sequence issues');
  if (value < start) return invalid(`is below the first number of this sequence (${start})`);
  return { valid: true, number: value };
}
