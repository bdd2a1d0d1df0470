/**
 * The invoice ledger: every completed billing job appends its invoice lines (per customer and
 * currency) to one stream (TALLYHO_BILLING_LEDGER_STREAM, default `billing-invoices`), through
 * the streams capability's single writer — one append-only NDJSON log of every invoice, for
 * accounting exports. The producer is the job and round and the sequence number the line's
 * position, so a repeated delivery (after a crash) is recognised by the writer and not appended twice.
 */
import type { StreamsApi } from '../streams/service';

export interface InvoiceLedger {
  append(jobId: string, round: number, csv: string): Promise<'delivered' | 'notConfigured'>;
}

export interface LedgerEvent {
  readonly producer: string;
  readonly seq: number;
  readonly data: Record<string, string | number>;
}

function ledgerProducer(jobId: string, round: number): string {
  return `job-${jobId}-r${round}`;
}

/** One event per invoice line; amounts stay strings (totals may pass 2^53 minor units). */
export function invoiceEvents(jobId: string, round: number, csv: string): LedgerEvent[] {
  const [header, ...rows] = csv.split('\r\n').filter((line) => line !== '');
  const columns = (header ?? '').split(',');
  return rows.map((row, seq) => {
    const cells = row.split(',');
    const data: Record<string, string | number> = { job: jobId, round };
    columns.forEach((column, i) => {
      data[column] = column === 'exponent' || column === 'transactions' ? Number(cells[i]) : (cells[i] ?? '');
    });
    return { producer: ledgerProducer(jobId, round), seq, data };
  });
}

/**
 * Appends to `type` with the invocation's streams API, `maxBatchEvents` (the streams limit per
 * request, TALLYHO_STREAMS_MAX_BATCH_EVENTS) at a time; `notConfigured` when the ledger is off.
 */
export function streamInvoiceLedger(
  type: string | undefined,
  streams: () => StreamsApi | undefined,
  maxBatchEvents: number,
): InvoiceLedger {
  return {
    async append(jobId, round, csv) {
      if (type === undefined) return 'notConfigured';
      const api = streams();
      // Left pending: an invocation with a Durable client (a queue trigger, the reconciler) delivers it.
      if (api === undefined) throw new Error(`No streams client in this invocation to append to ${type}`);
      const events = invoiceEvents(jobId, round, csv);
      for (let i = 0; i < events.length; i += maxBatchEvents) await api.appendEvents(type, events.slice(i, i + maxBatchEvents), 'buffered');
      return 'delivered';
    },
  };
}

export const noInvoiceLedger: InvoiceLedger = { append: () => Promise.resolve('notConfigured') };
