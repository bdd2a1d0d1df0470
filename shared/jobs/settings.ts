/** The jobs capability's settings (shared/settings.ts explains the declarations). */
import { custom, group, int, ncrontab, SettingProblems, type SettingsOf, text } from '../settings';
import { defaultRatesJson, parseRateTable, type RateTable } from './billing/rates';
import { maxEnvelopeJsonBytes, sealOverheadBytes } from './seal';

/** Queue names: lower-case letters, digits and single hyphens; room left for `-<n>-poison`. */
const queuePrefixPattern = /^(?=.{3,54}$)[a-z0-9]+(-[a-z0-9]+)*$/;

const ledgerStreamPattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

function rates(value: string): RateTable | SettingProblems {
  const parsed = parseRateTable(value);
  return parsed.problems.length === 0 ? parsed.table : new SettingProblems(parsed.problems);
}

function ledgerStream(value: string): string | undefined | SettingProblems {
  if (!ledgerStreamPattern.test(value)) return new SettingProblems([`"${value}" does not match ${String(ledgerStreamPattern)}`]);
  return value === 'none' ? undefined : value;
}

export const jobSettings = group(
  {
    queues: int(
      'TALLYHO_JOBS_QUEUES',
      4,
      1,
      8,
      'work queues envelopes are spread over, 1–8 (one trigger and one poison trigger each; read when the app starts)',
    ),
    queuePrefix: text(
      'TALLYHO_JOBS_QUEUE_PREFIX',
      'jobs-work',
      'work queues are `<prefix>-0` … `<prefix>-<K-1>`; infra provisions the default names',
      queuePrefixPattern,
    ),
    maxItems: int('TALLYHO_JOBS_MAX_ITEMS', 10_000, 1, 100_000, 'items one job may hold (413 above), up to 100,000'),
    maxOpen: int(
      'TALLYHO_JOBS_MAX_OPEN',
      1000,
      1,
      100_000,
      'unfinished jobs past which `POST /api/jobs` gets 429 for a new job (soft cap, counted from the open index)',
    ),
    maxRequestBytes: int(
      'TALLYHO_JOBS_MAX_REQUEST_BYTES',
      4 * 1024 * 1024,
      1024,
      100 * 1024 * 1024,
      'largest `POST /api/jobs` body (413 above); replaces `TALLYHO_MAX_BODY_BYTES` there',
    ),
    maxItemBytes: int('TALLYHO_JOBS_MAX_ITEM_BYTES', 256 * 1024, 256, 4 * 1024 * 1024, 'largest single item, serialised (413 above)'),
    envelopeMaxItems: int('TALLYHO_JOBS_ENVELOPE_MAX_ITEMS', 32, 1, 99, 'items per envelope (queue message), 1–99'),
    envelopeMaxBytes: int(
      'TALLYHO_JOBS_ENVELOPE_MAX_BYTES',
      48_000,
      4096,
      maxEnvelopeJsonBytes,
      `largest envelope JSON, 4096–${maxEnvelopeJsonBytes} (+${sealOverheadBytes} bytes of seal, then base64: exactly the 64 KiB a message holds)`,
    ),
    claimCheckBytes: int(
      'TALLYHO_JOBS_CLAIM_CHECK_BYTES',
      8192,
      64,
      32 * 1024,
      'an item larger than this travels as a claim check (at least 1024 below the envelope size)',
    ),
    itemConcurrency: int('TALLYHO_JOBS_ITEM_CONCURRENCY', 8, 1, 64, 'items of one envelope processed at once'),
    maxAttempts: int('TALLYHO_JOBS_MAX_ATTEMPTS', 3, 1, 20, 'attempts per item before a transient failure is final'),
    retryDelaySeconds: int('TALLYHO_JOBS_RETRY_DELAY_SECONDS', 10, 0, 3600, "delay before an item's first retry; doubles per attempt"),
    enqueueParallelism: int(
      'TALLYHO_JOBS_ENQUEUE_PARALLELISM',
      16,
      1,
      64,
      'envelopes sent at once while enqueuing (the most a resumed enqueue can send twice)',
    ),
    staleSeconds: int(
      'TALLYHO_JOBS_STALE_SECONDS',
      120,
      5,
      86_400,
      'a finalization, delivery or event idle this long is taken over by the reconciler',
    ),
    reconcileSchedule: ncrontab('TALLYHO_JOBS_RECONCILE_SCHEDULE', '0 */1 * * * *', 'when the job reconciler runs (six-field NCRONTAB)'),
    billingRates: custom(
      'TALLYHO_JOBS_BILLING_RATES',
      parseRateTable(defaultRatesJson).table,
      defaultRatesJson,
      'billing tax rates, JSON category → percentage',
      rates,
    ),
    billingLedgerStream: custom(
      'TALLYHO_JOBS_BILLING_LEDGER_STREAM',
      'billing-invoices',
      'billing-invoices',
      'stream every completed billing job appends its invoice lines to (`none`: off)',
      ledgerStream,
    ),
  },
  (s, report, names) => {
    // An item kept inline must fit an envelope on its own, with room for the envelope's own fields.
    if (s.claimCheckBytes > s.envelopeMaxBytes - 1024)
      report(names.claimCheckBytes, `must be at least 1024 below ${names.envelopeMaxBytes}`);
  },
);

export type JobSettings = SettingsOf<typeof jobSettings>;
