/**
 * The tax rate table of the billing processor: tax category -> rate. Rates are given as percentages
 * in decimal text (`"20"`, `"8.875"`, at most four decimals) and held as integer parts per million,
 * so every later step is integer arithmetic (20 % = 200,000 ppm).
 */

/** Tax category -> rate in parts per million of the net amount. */
export type RateTable = ReadonlyMap<string, number>;

/** The documented default (TALLYHO_BILLING_RATES): an example table, not any country's law. */
export const defaultRatesJson = '{"standard":"20","reduced":"5","zero":"0","exempt":"0"}';

export const categoryPattern = /^[a-z][a-z0-9_-]{0,31}$/;
const percentPattern = /^(\d{1,3})(?:\.(\d{1,4}))?$/;

/** `"8.875"` -> 88,750 ppm; undefined unless it is a plain decimal from 0 to 100 with at most 4 decimals. */
export function percentToPpm(text: string): number | undefined {
  const m = percentPattern.exec(text);
  if (m === null) return undefined;
  const ppm = Number(m[1]) * 10_000 + Number((m[2] ?? '').padEnd(4, '0'));
  return ppm <= 1_000_000 ? ppm : undefined;
}

/** Parses the setting; every problem is named so the configuration error can list them all. */
export function parseRateTable(text: string): { table: RateTable; problems: string[] } {
  const problems: string[] = [];
  const table = new Map<string, number>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { table, problems: ['is not JSON (expected an object like {"standard":"20"})'] };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { table, problems: ['must be a JSON object of tax category -> percentage'] };
  }
  for (const [category, value] of Object.entries(parsed)) {
    if (!categoryPattern.test(category)) problems.push(`category "${category}" must match ${String(categoryPattern)}`);
    // A JSON number is read through its shortest decimal text, which is exact for up to 4 decimals.
    const ppm = typeof value === 'string' || typeof value === 'number' ? percentToPpm(String(value)) : undefined;
    if (ppm === undefined)
      problems.push(`rate of "${category}" must be a percentage from 0 to 100 with at most 4 decimals (got ${JSON.stringify(value)})`);
    else table.set(category, ppm);
  }
  if (Object.keys(parsed).length === 0) problems.push('names no tax category');
  return { table, problems };
}
