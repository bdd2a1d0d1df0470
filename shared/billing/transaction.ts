/**
 * A billing transaction and its validation. Money is an integer of minor units (`amountMinor`,
 * e.g. cents): a fractional number, a string or anything past ±10^12 is rejected rather than
 * rounded, so no floating-point amount ever enters a total.
 */
import * as z from 'zod';

import { isoTimestamp } from '../http/schemas';
import { itemId } from '../jobs';
import { categoryPattern } from './rates';
import { currencyExponent } from './currencies';

/** The billing processor's name, as a job's `processor` names it. */
export const billingProcessorName = 'billing';

/** Largest |amountMinor| of one transaction: 10^12 minor units. */
const maxAmountMinor = 1_000_000_000_000;

const customerIdPattern = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

const transactionSchema = z
  .strictObject({
    id: itemId,
    customerId: z.string().regex(customerIdPattern, 'must be 1-64 letters, digits, "_", ".", ":" or "-", starting with a letter or digit'),
    amountMinor: z
      .number({ error: 'must be a JSON integer of minor units (e.g. 1999 for 19.99 EUR)' })
      .refine(Number.isInteger, 'must be an integer number of minor units (no fractional or floating-point money)')
      .refine((n) => Math.abs(n) <= maxAmountMinor, `must be within ±${maxAmountMinor} minor units`),
    currency: z
      .string({ error: 'must be an ISO 4217 code' })
      .refine((c) => currencyExponent(c) !== undefined, 'is not an accepted ISO 4217 currency code (upper case, e.g. EUR)'),
    taxCategory: z.string({ error: 'must be a string' }).regex(categoryPattern, 'must be a tax category name like "standard"'),
    occurredAt: isoTimestamp,
    description: z.string().max(1000).optional(),
    /** Anything the caller wants kept with the transaction; it travels with the item (large ones by claim check). */
    metadata: z.record(z.string(), z.json()).optional(),
  })
  .meta({
    id: 'BillingTransaction',
    example: {
      id: 'tx-000123',
      customerId: 'c-42',
      amountMinor: 1999,
      currency: 'EUR',
      taxCategory: 'standard',
      occurredAt: '2026-03-01T12:00:00Z',
    },
  });

type Transaction = z.output<typeof transactionSchema>;

export type Validation = { readonly ok: true; readonly transaction: Transaction } | { readonly ok: false; readonly reason: string };

export function validateTransaction(item: unknown): Validation {
  const parsed = transactionSchema.safeParse(item);
  if (parsed.success) return { ok: true, transaction: parsed.data };
  const reason = parsed.error.issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys') return `unknown field(s) ${issue.keys.join(', ')}`;
      return path === '' ? issue.message : `${path}: ${issue.message}`;
    })
    .join('; ');
  return { ok: false, reason };
}
