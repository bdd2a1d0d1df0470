/**
 * The invoice ledger: every completed billing job appends its invoice lines (per customer and
 * currency) to one stream (TALLYHO_BILLING_LEDGER_STREAM, default `billing-invoices`), through
 * the streams capability's single writer — one append-only NDJSON log of every invoice, for
 * accounting exports. The producer is the job and round and the sequence number the line's
 * position, so a repeated delivery (after a crash) is recognised by the writer and not appended twice.
 */
import type { DurableClient } from '../durable/client';
import type { StreamsApi } from '../streams';

export interface InvoiceLedger {
  /** Appends a job's invoice lines on `durable`, the client of the invocation the hand-on runs in. */
  append(jobId: string, round: number, csv: string, durable: DurableClient): Promise<'delivered' | 'notConfigured'>;
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
 * Appends to `type` with the streams API on the invocation's Durable client, `maxBatchEvents` (the
 * streams limit per request, TALLYHO_STREAMS_MAX_BATCH_EVENTS) at a time; `notConfigured` when the
 * ledger is off.
 */
export function streamInvoiceLedger(
  type: string | undefined,
  streams: (durable: DurableClient) => StreamsApi,
  maxBatchEvents: number,
): InvoiceLedger {
  return {
    async append(jobId, round, csv, durable) {
      if (type === undefined) return 'notConfigured';
      const api = streams(durable);
      const events = invoiceEvents(jobId, round, csv);
      for (let i = 0; i < events.length; i += maxBatchEvents) await api.appendEvents(type, events.slice(i, i + maxBatchEvents), 'buffered');
      return 'delivered';
    },
  };
}
