/**
 * Billing test data and an independent computation of what the invoice must say: plain Number
 * arithmetic on small integers (exact below 2^53), written separately from shared/jobs/billing.
 */
import { seededRandom } from '../../shared/clock';

export interface TestTransaction {
  readonly id: string;
  readonly customerId: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly taxCategory: string;
  readonly occurredAt: string;
  readonly [extra: string]: unknown;
}

/** Percentages of the default rate table, in ppm. */
const defaultRatesPpm: Readonly<Record<string, number>> = { standard: 200_000, reduced: 50_000, zero: 0, exempt: 0 };

const currencies = ['EUR', 'USD', 'JPY', 'KWD', 'GBP'];
const categories = ['standard', 'reduced', 'zero', 'exempt'];

export function transactions(count: number, seed = 1, prefix = 'tx'): TestTransaction[] {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}-${String(i).padStart(6, '0')}`,
    customerId: `c-${Math.floor(random() * 37)}`,
    // Mostly positive, some refunds, amounts that make every rounding case show up.
    amountMinor: Math.floor(random() * 2_000_000) - 200_000,
    currency: pick(currencies),
    taxCategory: pick(categories),
    occurredAt: new Date(Date.UTC(2026, 1, 1) + i * 1000).toISOString(),
  }));
}

function halfEven(numerator: number, denominator: number): number {
  const remainder = numerator % denominator;
  const quotient = (numerator - remainder) / denominator;
  const twice = Math.abs(remainder) * 2;
  if (twice > denominator || (twice === denominator && Math.abs(quotient) % 2 === 1)) return quotient + Math.sign(numerator);
  return quotient + 0;
}

export interface ExpectedTotal {
  transactions: number;
  net: number;
  tax: number;
  gross: number;
}

/** `customer|currency` -> totals in minor units. */
export function expectedTotals(
  items: readonly TestTransaction[],
  rates: Readonly<Record<string, number>> = defaultRatesPpm,
): Map<string, ExpectedTotal> {
  const totals = new Map<string, ExpectedTotal>();
  for (const t of items) {
    const tax = halfEven(t.amountMinor * (rates[t.taxCategory] as number), 1_000_000);
    const key = `${t.customerId}|${t.currency}`;
    const total = totals.get(key) ?? { transactions: 0, net: 0, tax: 0, gross: 0 };
    total.transactions++;
    total.net += t.amountMinor;
    total.tax += tax;
    total.gross += t.amountMinor + tax;
    totals.set(key, total);
  }
  return totals;
}

/** The invoice CSV as `customer|currency` -> totals (minor-unit columns). */
export function invoiceTotals(csv: string): Map<string, ExpectedTotal> {
  const [header, ...lines] = csv.split('\r\n').filter((l) => l !== '');
  const columns = (header ?? '').split(',');
  const at = (row: string[], name: string): string => row[columns.indexOf(name)] ?? '';
  return new Map(
    lines.map((line) => {
      const row = line.split(',');
      return [
        `${at(row, 'customerId')}|${at(row, 'currency')}`,
        {
          transactions: Number(at(row, 'transactions')),
          net: Number(at(row, 'netMinor')),
          tax: Number(at(row, 'taxMinor')),
          gross: Number(at(row, 'grossMinor')),
        },
      ];
    }),
  );
}
