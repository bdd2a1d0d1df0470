/** The billing processor's settings (shared/settings.ts explains the declarations). */
import { custom, group, SettingProblems, type SettingsOf } from '../settings';
import { defaultRatesJson, parseRateTable, type RateTable } from './rates';

const ledgerStreamPattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

function rates(value: string): RateTable | SettingProblems {
  const parsed = parseRateTable(value);
  return parsed.problems.length === 0 ? parsed.table : new SettingProblems(parsed.problems);
}

function ledgerStream(value: string): string | undefined | SettingProblems {
  if (!ledgerStreamPattern.test(value)) return new SettingProblems([`"${value}" does not match ${String(ledgerStreamPattern)}`]);
  return value === 'none' ? undefined : value;
}

export const billingSettings = group({
  rates: custom(
    'TALLYHO_BILLING_RATES',
    parseRateTable(defaultRatesJson).table,
    defaultRatesJson,
    'billing tax rates, JSON category → percentage',
    rates,
  ),
  ledgerStream: custom(
    'TALLYHO_BILLING_LEDGER_STREAM',
    'billing-invoices',
    'billing-invoices',
    'stream every completed billing job appends its invoice lines to (`none`: off)',
    ledgerStream,
  ),
});

export type BillingSettings = SettingsOf<typeof billingSettings>;
