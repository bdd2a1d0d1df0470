/**
 * The billing processor, the reference example of an in-app processor (docs/write-a-processor.md):
 * it owns its settings (./settings.ts), its ledger stream (./ledger.ts) and everything else it
 * needs; the jobs core knows it only through `JobProcessor`. Map: validate a transaction and compute its tax and gross from the rate
 * table (integer arithmetic, half-even per line). Reduce: per-customer, per-currency totals and the
 * invoice summary file `invoice.csv`, computed once by the job's finalizer from the lines of every
 * succeeded transaction (a `BillingLineSource`, so where the lines are read from can change without
 * touching the arithmetic).
 */
import type { FinalizeContext, ItemOutcome, JobProcessor, JsonObject } from '../jobs';
import { type BillingLine, invoiceCsv, isBillingLine, reduceLines } from './invoice';
import type { InvoiceLedger } from './ledger';
import { taxMinor } from './money';
import type { RateTable } from './rates';
import type { BillingSettings } from './settings';
import { billingProcessorName, validateTransaction } from './transaction';

const invoiceFile = 'invoice.csv';

/** Where the reduce reads the mapped lines from. */
interface BillingLineSource {
  lines(context: FinalizeContext): AsyncIterable<BillingLine>;
}

/** The lines are the outputs of the succeeded items' result rows (each item once). */
const resultLineSource: BillingLineSource = {
  async *lines(context) {
    for await (const { id, output } of context.outputs()) {
      if (!isBillingLine(output)) throw new Error(`The result of ${id} is not a billing line`);
      yield output;
    }
  },
};

export function mapTransaction(item: JsonObject, rates: RateTable): ItemOutcome {
  const checked = validateTransaction(item);
  if (!checked.ok) return { ok: false, code: 'invalid', reason: checked.reason, retryable: false };
  const tx = checked.transaction;
  const rate = rates.get(tx.taxCategory);
  if (rate === undefined) {
    return {
      ok: false,
      code: 'unknownTaxCategory',
      reason: `taxCategory: "${tx.taxCategory}" is not in the rate table (known: ${[...rates.keys()].join(', ')})`,
      retryable: false,
    };
  }
  const tax = taxMinor(tx.amountMinor, rate);
  const line: BillingLine = {
    customerId: tx.customerId,
    currency: tx.currency,
    amountMinor: tx.amountMinor,
    taxCategory: tx.taxCategory,
    taxRatePpm: rate,
    taxMinor: tax,
    grossMinor: tx.amountMinor + tax,
  };
  return { ok: true, output: { ...line } };
}

export interface BillingOptions {
  /** Where the reduce reads the mapped lines (default: the succeeded items' results). */
  readonly source?: BillingLineSource;
  /** Where a completed job's invoice lines go (default: nowhere, and the processor has no hand-on step). */
  readonly ledger?: InvoiceLedger;
}

/** What the composition root registers: the name jobs use, a line for the OpenAPI document, the processor. */
export const billingInfo = {
  name: billingProcessorName,
  description: 'transactions in, per-customer invoice totals out (invoice.csv), appended to the invoice ledger stream',
  example: {
    processor: billingProcessorName,
    items: [
      { id: 'tx-1', customerId: 'c-42', amountMinor: 1999, currency: 'EUR', taxCategory: 'standard', occurredAt: '2026-03-01T12:00:00Z' },
      { id: 'tx-2', customerId: 'c-42', amountMinor: 1500, currency: 'JPY', taxCategory: 'reduced', occurredAt: '2026-03-01T12:05:00Z' },
    ],
  },
} as const;

/** The stream only billing appends to (undefined when the ledger is off). */
export function billingOwnStreams(settings: Pick<BillingSettings, 'ledgerStream'>): string[] {
  return settings.ledgerStream === undefined ? [] : [settings.ledgerStream];
}

export function billingProcessor(rates: RateTable, options: BillingOptions = {}): JobProcessor {
  const source = options.source ?? resultLineSource;
  const { ledger } = options;
  return {
    name: billingProcessorName,
    processItem: (item) => Promise.resolve(mapTransaction(item, rates)),
    async finalize(context) {
      const totals = await reduceLines(source.lines(context));
      const invoice = await context.writeFile(invoiceFile, 'text/csv; charset=utf-8', invoiceCsv(totals));
      return {
        files: { invoice },
        customers: new Set(totals.map((t) => t.customerId)).size,
        invoiceLines: totals.length,
        transactions: totals.reduce((n, t) => n + t.transactions, 0),
      };
    },
    ...(ledger === undefined
      ? {}
      : {
          async deliver(context) {
            const csv = await context.readFile(invoiceFile);
            if (csv === undefined) throw new Error(`Job ${context.jobId} has no ${invoiceFile} to deliver`);
            return ledger.append(context.jobId, context.round, csv, context.durable);
          },
        }),
  };
}
