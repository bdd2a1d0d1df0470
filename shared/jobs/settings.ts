/** The jobs capability's settings (shared/settings.ts explains the declarations). */
import { group, int, ncrontab, type SettingsOf, text } from '../settings';
import { maxEnvelopeJsonBytes, sealOverheadBytes } from './envelopes/seal';
import { idleLimitBounds } from './processors/processorDefinition';

/** Queue names: lower-case letters, digits and single hyphens; room left for `-r-<n>-poison` (a retry lane's poison queue, 63 in all). */
const queuePrefixPattern = /^(?=.{3,52}$)[a-z0-9]+(-[a-z0-9]+)*$/;

export const jobSettings = group(
  {
    queues: int(
      'TALLYHO_JOBS_QUEUES',
      4,
      1,
      8,
      'work queues envelopes are spread over, 1–8 (each with a retry lane; a trigger and a poison trigger for each queue and lane; read when the app starts)',
    ),
    queuePrefix: text(
      'TALLYHO_JOBS_QUEUE_PREFIX',
      'jobs-work',
      'work queues are `<prefix>-0` … `<prefix>-<K-1>`, their retry lanes `<prefix>-r-0` …; infra provisions the default names',
      queuePrefixPattern,
    ),
    maxItems: int('TALLYHO_JOBS_MAX_ITEMS', 10_000, 1, 100_000, 'items one job may hold (413 above), up to 100,000'),
    maxOpen: int(
      'TALLYHO_JOBS_MAX_OPEN',
      1000,
      1,
      100_000,
      'unfinished jobs past which `POST /api/jobs` gets 429 for a new job (exact across instances; a job frees its place when it finishes)',
    ),
    maxOpenPerOwner: int(
      'TALLYHO_JOBS_MAX_OPEN_PER_OWNER',
      250,
      1,
      100_000,
      "unfinished jobs one caller may hold of TALLYHO_JOBS_MAX_OPEN (at most all of them); past it that caller's new jobs get 429",
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
    idleLimitSeconds: int(
      'TALLYHO_JOBS_IDLE_LIMIT_SECONDS',
      86_400,
      idleLimitBounds.min,
      idleLimitBounds.max,
      "a job no worker has served this long expires: its unfinished items fail with code `expired`, it finishes and gives back its place among TALLYHO_JOBS_MAX_OPEN (a processor's `idleLimitSeconds` overrides it; checked by the reconciler)",
    ),
    reconcilePage: int(
      'TALLYHO_JOBS_RECONCILE_PAGE',
      1000,
      1,
      100_000,
      'open jobs one reconciler pass visits; the next pass goes on after the last (a cursor in the jobs table)',
    ),
    reconcileSchedule: ncrontab('TALLYHO_JOBS_RECONCILE_SCHEDULE', '0 */1 * * * *', 'when the job reconciler runs (six-field NCRONTAB)'),
    maxProcessors: int('TALLYHO_JOBS_MAX_PROCESSORS', 100, 1, 10_000, 'external and webhook processors that may be declared (409 above)'),
    processorCacheSeconds: int(
      'TALLYHO_JOBS_PROCESSOR_CACHE_SECONDS',
      5,
      0,
      300,
      "how long an instance keeps a processor's declaration before reading it again (a change takes this long to reach every instance)",
    ),
    leasePollMaxMs: int(
      'TALLYHO_JOBS_LEASE_POLL_MAX_MS',
      1000,
      50,
      30_000,
      "longest pause between an idle processor queue's polls while lease requests wait on it (one poll serves every waiting request of an instance)",
    ),
    maxLeaseWaiters: int(
      'TALLYHO_JOBS_MAX_LEASE_WAITERS',
      2000,
      1,
      100_000,
      'lease requests one instance holds open at once, a quarter per caller (docs/security.md#fair-shares)',
    ),
    pushSchedule: ncrontab(
      'TALLYHO_JOBS_PUSH_SCHEDULE',
      '*/2 * * * * *',
      'when the pusher looks for batches of webhook processors (six-field NCRONTAB; one instance at a time runs it)',
    ),
    pushRunSeconds: int(
      'TALLYHO_JOBS_PUSH_RUN_SECONDS',
      50,
      1,
      540,
      'how long one pusher run goes on while there is work (then the next run takes over)',
    ),
    retentionDays: int(
      'TALLYHO_JOBS_RETENTION_DAYS',
      30,
      0,
      3650,
      'finished jobs, their results and files are deleted this many days after they finished (0: kept forever)',
    ),
  },
  (s, report, names) => {
    // An item kept inline must fit an envelope on its own, with room for the envelope's own fields.
    if (s.claimCheckBytes > s.envelopeMaxBytes - 1024)
      report(names.claimCheckBytes, `must be at least 1024 below ${names.envelopeMaxBytes}`);
  },
);

export type JobSettings = SettingsOf<typeof jobSettings>;
