/**
 * Billing, an in-app job processor: `createBilling(deps)` builds it from its settings (the rate table,
 * the invoice ledger stream) and the streams API it appends the ledger through, on the Durable client
 * of the invocation its hand-on runs in. Without a ledger stream it has no hand-on step.
 */
import type { DurableClient } from '../durable/client';
import type { JobProcessor } from '../jobs';
import type { StreamsApi } from '../streams';
import { streamInvoiceLedger } from './ledger';
import { billingProcessor } from './processor';
import type { BillingSettings } from './settings';

export { billingInfo, billingOwnStreams } from './processor';

export interface BillingDeps {
  readonly settings: BillingSettings;
  /** The streams API on a Durable client (the hand-on's invocation's). */
  readonly streams: (durable: DurableClient) => StreamsApi;
  /** TALLYHO_STREAMS_MAX_BATCH_EVENTS: the most events one append takes. */
  readonly maxBatchEvents: number;
}

export function createBilling(deps: BillingDeps): JobProcessor {
  const { rates, ledgerStream } = deps.settings;
  return billingProcessor(
    rates,
    ledgerStream === undefined ? {} : { ledger: streamInvoiceLedger(ledgerStream, deps.streams, deps.maxBatchEvents) },
  );
}
