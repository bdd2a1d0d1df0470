/**
 * The reduce step of billing: per-customer, per-currency totals of the mapped lines, and the
 * invoice summary file (CSV). Sums are BigInt, so no total loses a minor unit whatever the volume.
 */
import { currencyExponent } from './currencies';
import { formatMinor } from './money';

/** What the map step outputs per transaction (the item's result). */
export interface BillingLine {
  readonly customerId: string;
  readonly currency: string;
  readonly amountMinor: number;
  readonly taxCategory: string;
  readonly taxRatePpm: number;
  readonly taxMinor: number;
  readonly grossMinor: number;
}

export interface CustomerTotal {
  readonly customerId: string;
  readonly currency: string;
  readonly transactions: number;
  readonly netMinor: bigint;
  readonly taxMinor: bigint;
  readonly grossMinor: bigint;
}

export function isBillingLine(value: unknown): value is BillingLine {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.customerId === 'string' &&
    typeof v.currency === 'string' &&
    Number.isSafeInteger(v.amountMinor) &&
    Number.isSafeInteger(v.taxMinor) &&
    Number.isSafeInteger(v.grossMinor)
  );
}

/** Totals sorted by customer, then currency (ordinal order, stable across runs). */
export async function reduceLines(lines: AsyncIterable<BillingLine>): Promise<CustomerTotal[]> {
  const totals = new Map<string, { customerId: string; currency: string; transactions: number; net: bigint; tax: bigint; gross: bigint }>();
  for await (const line of lines) {
    const key = `${line.customerId}\u0000${line.currency}`;
    let total = totals.get(key);
    if (total === undefined) {
      total = { customerId: line.customerId, currency: line.currency, transactions: 0, net: 0n, tax: 0n, gross: 0n };
      totals.set(key, total);
    }
    total.transactions++;
    total.net += BigInt(line.amountMinor);
    total.tax += BigInt(line.taxMinor);
    total.gross += BigInt(line.grossMinor);
  }
  const ordinal = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return [...totals.values()]
    .sort((a, b) => ordinal(a.customerId, b.customerId) || ordinal(a.currency, b.currency))
    .map((t) => ({
      customerId: t.customerId,
      currency: t.currency,
      transactions: t.transactions,
      netMinor: t.net,
      taxMinor: t.tax,
      grossMinor: t.gross,
    }));
}

const invoiceColumns = [
  'customerId',
  'currency',
  'exponent',
  'transactions',
  'netMinor',
  'taxMinor',
  'grossMinor',
  'net',
  'tax',
  'gross',
] as const;

function cell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** RFC 4180 CSV (CRLF line ends) with a header row; amounts in minor units and as major-unit decimals. */
export function invoiceCsv(totals: readonly CustomerTotal[]): string {
  const rows = totals.map((t) => {
    const exponent = currencyExponent(t.currency) ?? 2;
    return [
      t.customerId,
      t.currency,
      String(exponent),
      String(t.transactions),
      t.netMinor.toString(),
      t.taxMinor.toString(),
      t.grossMinor.toString(),
      formatMinor(t.netMinor, exponent),
      formatMinor(t.taxMinor, exponent),
      formatMinor(t.grossMinor, exponent),
    ];
  });
  return [[...invoiceColumns], ...rows].map((r) => `${r.map(cell).join(',')}\r\n`).join('');
}
