import { acceptedCurrencies, currencyExponent } from '../../../shared/billing/currencies';
import { invoiceCsv, reduceLines, type BillingLine } from '../../../shared/billing/invoice';
import { invoiceEvents, streamInvoiceLedger } from '../../../shared/billing/ledger';
import type { DurableClient } from '../../../shared/durable/client';
import { formatMinor, taxMinor } from '../../../shared/billing/money';
import { billingProcessor, mapTransaction } from '../../../shared/billing/processor';
import { parseRateTable, percentToPpm } from '../../../shared/billing/rates';
import { validateTransaction } from '../../../shared/billing/transaction';

const rates = parseRateTable('{"standard":"20","reduced":"5","nyc":"8.875","zero":"0"}').table;
const tx = (extra: Record<string, unknown> = {}) => ({
  id: 'tx-1',
  customerId: 'c-1',
  amountMinor: 1999,
  currency: 'EUR',
  taxCategory: 'standard',
  occurredAt: '2026-03-01T12:00:00Z',
  ...extra,
});

function from<T>(items: readonly T[]): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]: () => {
      let i = 0;
      return { next: () => Promise.resolve(i < items.length ? { value: items[i++] as T, done: false } : { value: undefined, done: true }) };
    },
  };
}

describe('tax arithmetic (integer minor units, half to even)', () => {
  it.each([
    // amount, ppm, expected: exact, below and above half, and ties to even in both directions
    [100, 200_000, 20],
    [1, 200_000, 0], // 0.2
    [3, 200_000, 1], // 0.6
    [25, 100_000, 2], // 2.5 -> 2 (even)
    [35, 100_000, 4], // 3.5 -> 4 (even)
    [45, 100_000, 4], // 4.5 -> 4
    [-25, 100_000, -2], // symmetric for refunds
    [-35, 100_000, -4],
    [-3, 200_000, -1],
    [1999, 88_750, 177], // 177.41125
    [12, 125_000, 2], // 1.5 -> 2
    [20, 125_000, 2], // 2.5 -> 2
  ])('tax(%d minor, %d ppm) = %d', (amount, ppm, expected) => {
    expect(taxMinor(amount, ppm)).toBe(expected);
  });

  it('is exact where floating point is not: 10^12 × 8.875 %', () => {
    expect(taxMinor(1_000_000_000_000, 88_750)).toBe(88_750_000_000);
    expect(taxMinor(999_999_999_999, 88_750)).toBe(88_750_000_000); // 88,749,999,999.91125
  });

  it('agrees with an independent decimal computation over many amounts', () => {
    for (let amount = -2000; amount <= 2000; amount += 7) {
      for (const ppm of [0, 50_000, 88_750, 200_000, 1_000_000]) {
        const exact = (amount * ppm) / 1_000_000; // exact in doubles for these sizes
        const floor = Math.floor(exact);
        const frac = exact - floor;
        const expected = frac > 0.5 ? floor + 1 : frac < 0.5 ? floor : floor % 2 === 0 ? floor : floor + 1;
        expect([amount, ppm, taxMinor(amount, ppm)]).toEqual([amount, ppm, expected + 0]); // + 0: no -0
      }
    }
  });

  it('formats minor units with the currency exponent', () => {
    expect(formatMinor(123456n, 2)).toBe('1234.56');
    expect(formatMinor(-5n, 2)).toBe('-0.05');
    expect(formatMinor(1500n, 0)).toBe('1500');
    expect(formatMinor(1n, 3)).toBe('0.001');
    expect(formatMinor(0n, 2)).toBe('0.00');
  });
});

describe('rate table setting', () => {
  it('reads percentages with up to four decimals as parts per million', () => {
    expect(percentToPpm('20')).toBe(200_000);
    expect(percentToPpm('8.875')).toBe(88_750);
    expect(percentToPpm('0.0001')).toBe(1);
    expect(percentToPpm('100')).toBe(1_000_000);
    expect(percentToPpm('100.5')).toBeUndefined();
    expect(percentToPpm('1e1')).toBeUndefined();
    expect(percentToPpm('-1')).toBeUndefined();
    expect(percentToPpm('8.87501')).toBeUndefined();
  });

  it('names every problem', () => {
    expect(parseRateTable('{"standard": 20, "reduced": "5"}').problems).toEqual([]);
    expect(parseRateTable('{"Standard": "20", "bad": "x", "neg": -1}').problems).toEqual([
      expect.stringContaining('category "Standard"'),
      expect.stringContaining('rate of "bad"'),
      expect.stringContaining('rate of "neg"'),
    ]);
    expect(parseRateTable('[1]').problems).toEqual([expect.stringContaining('JSON object')]);
    expect(parseRateTable('{').problems).toEqual([expect.stringContaining('not JSON')]);
    expect(parseRateTable('{}').problems).toEqual(['names no tax category']);
  });
});

describe('transaction validation', () => {
  it('accepts a well-formed transaction and computes tax and gross', () => {
    expect(mapTransaction(tx(), rates)).toEqual({
      ok: true,
      output: {
        customerId: 'c-1',
        currency: 'EUR',
        amountMinor: 1999,
        taxCategory: 'standard',
        taxRatePpm: 200_000,
        taxMinor: 400,
        grossMinor: 2399,
      },
    });
    expect(mapTransaction(tx({ amountMinor: -1999 }), rates)).toMatchObject({ ok: true, output: { taxMinor: -400, grossMinor: -2399 } });
    expect(mapTransaction(tx({ currency: 'JPY', amountMinor: 1500, metadata: { note: 'x' }, description: 'd' }), rates)).toMatchObject({
      ok: true,
    });
  });

  it.each([
    ['a fractional amount', { amountMinor: 19.99 }, /amountMinor: must be an integer number of minor units/],
    ['an amount as a string', { amountMinor: '1999' }, /amountMinor: must be a JSON integer/],
    ['an amount beyond 10^12', { amountMinor: 1e13 }, /amountMinor: must be within/],
    ['a lower-case currency', { currency: 'eur' }, /currency: is not an accepted ISO 4217/],
    ['an unknown currency', { currency: 'XYZ' }, /currency: is not an accepted ISO 4217/],
    ['a fund code', { currency: 'CLF' }, /currency/],
    ['a timestamp without offset', { occurredAt: '2026-03-01T12:00:00' }, /occurredAt/],
    ['a bad customer id', { customerId: 'a b' }, /customerId/],
    ['a missing customer', { customerId: undefined }, /customerId/],
    ['an unknown field', { amount: 5 }, /unknown field\(s\) amount/],
  ])('rejects %s with a reason naming the field', (_name, extra, reason) => {
    const outcome = mapTransaction(tx(extra), rates);
    expect(outcome).toEqual({ ok: false, code: 'invalid', reason: expect.stringMatching(reason), retryable: false });
  });

  it('rejects a tax category the rate table does not know, naming the known ones', () => {
    expect(mapTransaction(tx({ taxCategory: 'luxury' }), rates)).toEqual({
      ok: false,
      code: 'unknownTaxCategory',
      reason: expect.stringMatching(/"luxury" is not in the rate table \(known: standard, reduced, nyc, zero\)/),
      retryable: false,
    });
  });

  it('lists several problems at once', () => {
    const checked = validateTransaction(tx({ amountMinor: 1.5, currency: 'usd' }));
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason.split('; ')).toHaveLength(2);
  });

  it('knows the minor-unit exponents of the accepted currencies', () => {
    expect([currencyExponent('JPY'), currencyExponent('EUR'), currencyExponent('KWD'), currencyExponent('XXX')]).toEqual([
      0,
      2,
      3,
      undefined,
    ]);
    expect(acceptedCurrencies()).toHaveLength(new Set(acceptedCurrencies()).size);
    expect(acceptedCurrencies().every((c) => /^[A-Z]{3}$/.test(c))).toBe(true);
  });
});

describe('invoice reduce and CSV', () => {
  const line = (customerId: string, currency: string, amountMinor: number, taxMinor: number): BillingLine => ({
    customerId,
    currency,
    amountMinor,
    taxCategory: 'standard',
    taxRatePpm: 200_000,
    taxMinor,
    grossMinor: amountMinor + taxMinor,
  });

  it('totals per customer and currency, sorted, as BigInt', async () => {
    const totals = await reduceLines(
      from([
        line('b', 'EUR', 100, 20),
        line('a', 'JPY', 1500, 300),
        line('b', 'EUR', -50, -10),
        line('a', 'EUR', Number.MAX_SAFE_INTEGER, 0),
        line('a', 'EUR', 10, 2),
      ]),
    );
    expect(totals.map((t) => [t.customerId, t.currency, t.transactions, t.netMinor, t.taxMinor, t.grossMinor])).toEqual([
      ['a', 'EUR', 2, BigInt(Number.MAX_SAFE_INTEGER) + 10n, 2n, BigInt(Number.MAX_SAFE_INTEGER) + 12n],
      ['a', 'JPY', 1, 1500n, 300n, 1800n],
      ['b', 'EUR', 2, 50n, 10n, 60n],
    ]);
  });

  it('writes RFC 4180 CSV with minor units and major-unit decimals per currency exponent', async () => {
    const csv = invoiceCsv(
      await reduceLines(from([line('c-1', 'KWD', 1234, 247), line('c-1', 'JPY', 1500, 300), line('c-2', 'EUR', -5, -1)])),
    );
    expect(csv.split('\r\n')).toEqual([
      'customerId,currency,exponent,transactions,netMinor,taxMinor,grossMinor,net,tax,gross',
      'c-1,JPY,0,1,1500,300,1800,1500,300,1800',
      'c-1,KWD,3,1,1234,247,1481,1.234,0.247,1.481',
      'c-2,EUR,2,1,-5,-1,-6,-0.05,-0.01,-0.06',
      '',
    ]);
  });

  it('finalize reads the succeeded outputs and writes invoice.csv through the context', async () => {
    const written: Record<string, string> = {};
    const processor = billingProcessor(rates);
    const outputs = [1, 2, 3].map((i) => {
      const outcome = mapTransaction(tx({ id: `t${i}`, customerId: `c-${i % 2}` }), rates);
      if (!outcome.ok) throw new Error(outcome.reason);
      return { id: `t${i}`, output: outcome.output };
    });
    const summary = await processor.finalize({
      jobId: 'j',
      round: 0,
      outputs: () => from(outputs),
      writeFile: (name, _type, body) => {
        written[name] = body;
        return Promise.resolve(name);
      },
    });
    expect(summary).toEqual({ files: { invoice: 'invoice.csv' }, customers: 2, invoiceLines: 2, transactions: 3 });
    expect(written['invoice.csv']).toContain('c-1,EUR,2,2,3998,800,4798,39.98,8.00,47.98');
  });
});

describe('invoice ledger events', () => {
  it('one event per invoice line: producer = job and round, seq = line position, amounts as text', () => {
    const csv = invoiceCsv([
      { customerId: 'c-1', currency: 'EUR', transactions: 2, netMinor: 3998n, taxMinor: 800n, grossMinor: 4798n },
      { customerId: 'c-2', currency: 'JPY', transactions: 1, netMinor: 2n ** 60n, taxMinor: 0n, grossMinor: 2n ** 60n },
    ]);
    expect(invoiceEvents('j-1', 2, csv)).toEqual([
      {
        producer: 'job-j-1-r2',
        seq: 0,
        data: {
          job: 'j-1',
          round: 2,
          customerId: 'c-1',
          currency: 'EUR',
          exponent: 2,
          transactions: 2,
          netMinor: '3998',
          taxMinor: '800',
          grossMinor: '4798',
          net: '39.98',
          tax: '8.00',
          gross: '47.98',
        },
      },
      {
        producer: 'job-j-1-r2',
        seq: 1,
        data: expect.objectContaining({ customerId: 'c-2', exponent: 0, netMinor: '1152921504606846976', net: '1152921504606846976' }),
      },
    ]);
  });

  it('appends in requests of at most the streams batch limit, in line order', async () => {
    const lines = Array.from({ length: 7 }, (_, i) => ({
      customerId: `c-${i}`,
      currency: 'EUR',
      transactions: 1,
      netMinor: 100n,
      taxMinor: 20n,
      grossMinor: 120n,
    }));
    const requests: unknown[][] = [];
    const clients: unknown[] = [];
    const invocation = {} as DurableClient;
    const ledger = streamInvoiceLedger(
      'billing-invoices',
      (durable) => {
        clients.push(durable);
        return {
          appendEvents: (_type, events) => {
            requests.push([...events]);
            return Promise.resolve({} as never);
          },
        };
      },
      3,
    );
    await expect(ledger.append('j-1', 0, invoiceCsv(lines), invocation)).resolves.toBe('delivered');
    // The streams API of the client of the invocation the hand-on runs in.
    expect(clients.length).toBeGreaterThan(0);
    expect(clients.every((c) => c === invocation)).toBe(true);
    expect(requests.map((r) => r.length)).toEqual([3, 3, 1]);
    expect(requests.flat().map((e) => (e as { seq: number }).seq)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('is notConfigured without a stream, and appends nothing', async () => {
    const appendEvents = jest.fn();
    await expect(
      streamInvoiceLedger(undefined, () => ({ appendEvents }), 500).append('j-1', 0, 'a\r\n', {} as DurableClient),
    ).resolves.toBe('notConfigured');
    expect(appendEvents).not.toHaveBeenCalled();
  });
});
