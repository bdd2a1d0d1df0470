/**
 * Every setting the app reads, read and validated in one place. The connection settings use exactly
 * the names the Functions host reads for bindings (`AzureWebJobsStorage`, `AzureWebJobsStorage__*`,
 * `ServiceBusConnection__*`), so one setting serves the triggers and the SDK clients.
 *
 * `loadConfig` reports every missing or malformed setting by name at once; `getConfig` does it once
 * per process.
 */
import { Cron } from 'croner';

import { AppError } from './errors';
import { defaultRatesJson, parseRateTable, type RateTable } from './jobs/billing/rates';
import { parseSigningKey } from './signing/signer';

type Env = Readonly<Record<string, string | undefined>>;

/** Azurite's well-known development account (public, documented; not a secret). */
export const devStorageAccount = {
  name: 'devstoreaccount1',
  key: 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==',
} as const;

export interface StorageEndpoints {
  readonly blob: string;
  readonly queue: string;
  readonly table: string;
}

export type StorageCredentialSettings =
  | { readonly kind: 'sharedKey'; readonly accountName: string; readonly accountKey: string }
  | { readonly kind: 'sas'; readonly token: string }
  | { readonly kind: 'identity'; readonly managedIdentity: boolean; readonly clientId: string | undefined };

export interface StorageConnection {
  /** The setting the connection came from, for messages. */
  readonly setting: string;
  readonly accountName: string;
  readonly endpoints: StorageEndpoints;
  readonly credential: StorageCredentialSettings;
}

export type ServiceBusConnection =
  | { readonly kind: 'connectionString'; readonly setting: string; readonly connectionString: string }
  | {
      readonly kind: 'identity';
      readonly setting: string;
      readonly fullyQualifiedNamespace: string;
      readonly managedIdentity: boolean;
      readonly clientId: string | undefined;
    };

export interface SequenceSettings {
  /** Create an unknown sequence with default settings on first use instead of answering 404. */
  readonly autoCreate: boolean;
  /** Sequences `next` may auto-create at most (a function-level caller picks the names); 409 past it. */
  readonly maxAutoCreated: number;
  readonly maxAttempts: number;
  readonly maxWaitMs: number;
}

export interface CounterSettings {
  /** Six-field NCRONTAB schedule (with seconds) of the rollup timer. */
  readonly rollupSchedule: string;
  /** Safety window of counters created without one: hits younger than this are not folded yet. */
  readonly defaultSafetyWindowSeconds: number;
  /** Partitions (shards) of counters created without a count. */
  readonly defaultPartitions: number;
  /** Largest |by| one increment may carry. */
  readonly maxIncrement: number;
  /** Create an unknown counter with the defaults on its first increment instead of answering 404. */
  readonly autoCreate: boolean;
  /** Counters increments may auto-create at most (a function-level caller picks the names); 409 past it. */
  readonly maxAutoCreated: number;
  /** How long an instance trusts its cached copy of a counter's settings when incrementing. */
  readonly settingsCacheSeconds: number;
  /** Hits one rollup run folds per partition at most; the rest wait for the next run. */
  readonly rollupMaxHits: number;
}

export interface StreamSettings {
  /** Partitions an event type without a route row is hashed onto (`p00`, `p01`, …). */
  readonly partitions: number;
  /** How long an instance trusts its cached route of a type (a remap invalidates it at once locally). */
  readonly routeCacheSeconds: number;
  /** Flush once this many events are buffered (N). */
  readonly flushEvents: number;
  /** Flush once the buffer has waited this long (T). */
  readonly flushIntervalMs: number;
  /** Events one flush writes at most. */
  readonly flushMaxEvents: number;
  /** Unflushed events per writer at most; beyond it appends get 429 (back-pressure). */
  readonly maxBuffered: number;
  /** Unflushed NDJSON bytes per writer at most (bounds the writer's durable state); beyond it, 429. */
  readonly maxBufferedBytes: number;
  /** Events one request may carry. */
  readonly maxBatchEvents: number;
  /** Largest serialised event. */
  readonly maxEventBytes: number;
  /** Producers per writer whose last sequence number is remembered for deduplication (429 for a new one past it). */
  readonly maxProducers: number;
  /** A producer's mark is kept at least this long after its last event, however many others write. */
  readonly dedupWindowSeconds: number;
  /** Largest append block. */
  readonly maxBlockBytes: number;
  /** Blocks per append blob before the log rolls to the next blob. */
  readonly maxBlocksPerBlob: number;
  /** How often an idle flusher looks at its writer without being woken. */
  readonly idleRecheckSeconds: number;
  /** How long a request waits for the writer's receipt (and, with ack=flushed, for the flush). */
  readonly ackTimeoutMs: number;
  /** Distinct event types the task hub takes at most (each costs a writer entity and a flusher); 409 for a new one past it. */
  readonly maxTypes: number;
  /** The Durable task hub (TALLYHO_TASK_HUB): writers live in it, so the type count is kept per hub. */
  readonly taskHub: string;
  /** Longest a request with `wait=true` waits for room in a full buffer before answering 429. */
  readonly maxWaitSeconds: number;
}

export interface GateSettings {
  /** Longest `…/wait?timeout=` a client may ask for (the Azure front end drops idle requests at 230 s). */
  readonly waitMaxSeconds: number;
  /** How long one server-sent-events response stays open before the client reconnects. */
  readonly sseMaxSeconds: number;
  /** Comment lines on an open event stream, so proxies do not close it as idle. */
  readonly heartbeatSeconds: number;
  /** How often an instance reads a gate while long-poll or SSE clients wait on it. */
  readonly watchIntervalMs: number;
  /** Waiting runs one notify activity pushes the release to. */
  readonly notifyBatchSize: number;
  /** Runs one generation of a gate may hold waiting. */
  readonly maxWaiters: number;
  /** How long an admin call (create, release, reset) waits for the orchestration's answer before 202. */
  readonly commandWaitMs: number;
}

export interface ScheduleSettings {
  /** Hosts a webhook target may call: `example.com`, `*.example.com`, optionally with `:port` (443 otherwise). */
  readonly webhookAllowedHosts: readonly string[];
  /** How long one webhook call may take, response body included. */
  readonly webhookTimeoutMs: number;
  /** Response bytes read from a webhook at most (the rest is discarded). */
  readonly webhookMaxResponseBytes: number;
  /** Redirects followed per call, each checked against the allow-list. */
  readonly webhookMaxRedirects: number;
  /** Lets webhooks reach loopback and private addresses. For local development only. */
  readonly webhookAllowPrivateAddresses: boolean;
  /** Storage queues a queueMessage target may write to (`prefix*` or names; the app's, the host's and the task hub's never). */
  readonly allowedQueues: readonly string[];
  /** Service Bus queues and topics a serviceBus target may send to (`prefix*` or names; the app's own topics never). */
  readonly allowedServiceBusEntities: readonly string[];
  /** A fire older than this when the schedule gets to it counts as missed (catch-up policy). */
  readonly misfireGraceSeconds: number;
  /** Runs of one schedule in progress at once under the `allow` overlap policy. */
  readonly maxConcurrentRuns: number;
  /** Live schedules (pending, active, paused) past which a function-level create is refused (409); admin creates are not capped. */
  readonly maxLive: number;
  /** How often a run that completes later (a job) is polled. */
  readonly pollSeconds: number;
  /** Longest a schedule sleeps before it re-reads its control state (heals a lost wake-up). */
  readonly recheckSeconds: number;
  /** How often a schedule reads its index while a run outlives the wait it started in (a slow webhook). */
  readonly runCheckMs: number;
  /** Run records kept per schedule in the index. */
  readonly historyRuns: number;
  /** Six-field NCRONTAB schedule of the timer that completes creates cut short (rows left `pending`). */
  readonly reconcileSchedule: string;
}

export interface JobSettings {
  /** Work queues envelopes are spread over (K); the app registers one trigger (and one poison trigger) per queue. */
  readonly queues: number;
  /** Work queues are `<prefix>-0` … `<prefix>-<K-1>`; the host moves failing messages to `<queue>-poison`. */
  readonly queuePrefix: string;
  /** Items one job may hold (413 above). */
  readonly maxItems: number;
  /** Unfinished jobs past which `POST /api/jobs` answers 429 for a new job (gated runs' and schedules' jobs are not refused). */
  readonly maxOpen: number;
  /** Largest `POST /api/jobs` body (413 above); replaces the app-wide body limit for that endpoint. */
  readonly maxRequestBytes: number;
  /** Largest single item, serialised (413 above). */
  readonly maxItemBytes: number;
  /** Items one envelope (queue message) carries at most. */
  readonly envelopeMaxItems: number;
  /** Largest envelope JSON; base64 makes it 4/3 larger on the queue, which holds 64 KiB per message. */
  readonly envelopeMaxBytes: number;
  /** An item larger than this travels as a claim check (a reference into the job's input blob). */
  readonly claimCheckBytes: number;
  /** Items of one envelope processed at once. */
  readonly itemConcurrency: number;
  /** Attempts per item (the first included) before a retryable failure is recorded as final. */
  readonly maxAttempts: number;
  /** Delay before the first retry envelope becomes visible; doubled per further attempt. */
  readonly retryDelaySeconds: number;
  /** Envelopes sent at once while enqueuing (also the most a crash can make a resume send twice). */
  readonly enqueueParallelism: number;
  /** A job step (enqueue, finalize, publish) without progress for this long is taken over by the reconciler. */
  readonly staleSeconds: number;
  /** Six-field NCRONTAB schedule of the reconciler timer. */
  readonly reconcileSchedule: string;
  /** Billing processor: tax category -> rate (parts per million), from a JSON object of percentages. */
  readonly billingRates: RateTable;
  /** Stream (event type) every completed billing job appends its invoice lines to; undefined: off. */
  readonly billingLedgerStream: string | undefined;
}

export interface HttpSettings {
  /** Largest JSON body any endpoint reads; endpoints may set a lower limit. */
  readonly maxBodyBytes: number;
  readonly idempotencyTtlSeconds: number;
  /** Six-field NCRONTAB schedule of the timer that deletes expired idempotency rows. */
  readonly idempotencySweepSchedule: string;
}

export interface StorageRetrySettings {
  /** Attempts per storage request, the first included (the SDKs retry 408, 5xx and network errors). */
  readonly maxTries: number;
  /** A single attempt that takes longer than this is abandoned (and retried). */
  readonly tryTimeoutMs: number;
}

export interface Config {
  readonly storage: StorageConnection;
  readonly storageRetry: StorageRetrySettings;
  /** Undefined when no Service Bus is configured; features that publish to it then stay local. */
  readonly serviceBus: ServiceBusConnection | undefined;
  readonly http: HttpSettings;
  readonly sequences: SequenceSettings;
  readonly counters: CounterSettings;
  readonly schedules: ScheduleSettings;
  readonly gates: GateSettings;
  readonly streams: StreamSettings;
  readonly jobs: JobSettings;
  /** Master key of the app's MACs (TALLYHO_SIGNING_KEY); undefined: a random one kept in storage. */
  readonly signingKey: Buffer | undefined;
}

/** Collects problems so one failure message can name every bad setting. */
export class SettingsReader {
  readonly problems: string[] = [];

  constructor(readonly env: Env) {}

  raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string, pattern?: RegExp): string {
    const value = this.raw(name) ?? fallback;
    if (pattern !== undefined && !pattern.test(value)) {
      this.problems.push(`${name}: "${value}" does not match ${String(pattern)}`);
    }
    return value;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const text = this.raw(name);
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      this.problems.push(`${name}: "${text}" is not an integer from ${min} to ${max}`);
      return fallback;
    }
    return value;
  }

  bool(name: string, fallback: boolean): boolean {
    const text = this.raw(name);
    if (text === undefined) return fallback;
    const lower = text.toLowerCase();
    if (lower === 'true' || lower === '1') return true;
    if (lower === 'false' || lower === '0') return false;
    this.problems.push(`${name}: "${text}" is not true or false`);
    return fallback;
  }

  list(name: string, fallback: readonly string[] = []): readonly string[] {
    const text = this.raw(name);
    if (text === undefined) return fallback;
    return text
      .split(/[,;]/)
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
  }

  url(name: string, requireHttps: boolean): string | undefined {
    const text = this.raw(name);
    if (text === undefined) return undefined;
    try {
      const url = new URL(text);
      if (requireHttps && url.protocol !== 'https:') this.problems.push(`${name}: must be an https URL`);
      return text.replace(/\/+$/, '');
    } catch {
      this.problems.push(`${name}: "${text}" is not a URL`);
      return undefined;
    }
  }
}

function parseConnectionString(text: string): Map<string, string> {
  const parts = new Map<string, string>();
  for (const segment of text.split(';')) {
    const at = segment.indexOf('=');
    if (at <= 0) continue;
    parts.set(segment.slice(0, at).trim().toLowerCase(), segment.slice(at + 1).trim());
  }
  return parts;
}

function storageFromConnectionString(setting: string, text: string, r: SettingsReader): StorageConnection | undefined {
  const parts = parseConnectionString(text);
  if (parts.get('usedevelopmentstorage')?.toLowerCase() === 'true') {
    const proxy = (parts.get('developmentstorageproxyuri') ?? 'http://127.0.0.1').replace(/\/+$/, '');
    const at = (port: number): string => `${proxy}:${port}/${devStorageAccount.name}`;
    return {
      setting,
      accountName: devStorageAccount.name,
      endpoints: { blob: at(10000), queue: at(10001), table: at(10002) },
      credential: { kind: 'sharedKey', accountName: devStorageAccount.name, accountKey: devStorageAccount.key },
    };
  }
  const accountName = parts.get('accountname');
  const accountKey = parts.get('accountkey');
  const sas = parts.get('sharedaccesssignature');
  const protocol = parts.get('defaultendpointsprotocol') ?? 'https';
  const suffix = parts.get('endpointsuffix') ?? 'core.windows.net';
  const endpoint = (key: string, service: string): string | undefined =>
    parts.get(`${key}endpoint`)?.replace(/\/+$/, '') ??
    (accountName === undefined ? undefined : `${protocol}://${accountName}.${service}.${suffix}`);
  const blob = endpoint('blob', 'blob');
  const queue = endpoint('queue', 'queue');
  const table = endpoint('table', 'table');
  if (blob === undefined || queue === undefined || table === undefined) {
    r.problems.push(`${setting}: the connection string names no AccountName and not every service endpoint`);
    return undefined;
  }
  let credential: StorageCredentialSettings;
  if (accountName !== undefined && accountKey !== undefined) {
    credential = { kind: 'sharedKey', accountName, accountKey };
  } else if (sas !== undefined) {
    credential = { kind: 'sas', token: sas.replace(/^\?/, '') };
  } else {
    r.problems.push(`${setting}: the connection string has neither AccountName+AccountKey nor SharedAccessSignature`);
    return undefined;
  }
  return {
    setting,
    accountName: accountName ?? new URL(blob).hostname.split('.')[0] ?? 'account',
    endpoints: { blob, queue, table },
    credential,
  };
}

function isManagedIdentity(r: SettingsReader, prefix: string): boolean {
  const credential = r.raw(`${prefix}__credential`);
  if (credential === undefined) return false;
  if (credential.toLowerCase() !== 'managedidentity') {
    r.problems.push(`${prefix}__credential: "${credential}" is not supported (use managedidentity, or leave it unset)`);
    return false;
  }
  return true;
}

/**
 * A storage connection named `setting`: a connection string in `setting`, or identity-based
 * settings `setting__accountName` / `setting__{blob,queue,table}ServiceUri` with optional
 * `__credential=managedidentity` and `__clientId` (a user-assigned identity).
 */
export function readStorageConnection(r: SettingsReader, setting: string): StorageConnection | undefined {
  const text = r.raw(setting);
  if (text !== undefined) return storageFromConnectionString(setting, text, r);
  const accountName = r.string(`${setting}__accountName`, '', /^([a-z0-9]{3,24})?$/);
  const uri = (service: keyof StorageEndpoints): string | undefined =>
    r.url(`${setting}__${service}ServiceUri`, true) ??
    (accountName === '' ? undefined : `https://${accountName}.${service}.core.windows.net`);
  const blob = uri('blob') ?? r.url(`${setting}__serviceUri`, true);
  const queue = uri('queue');
  const table = uri('table');
  if (blob === undefined || queue === undefined || table === undefined) {
    r.problems.push(
      `${setting}: not set. Set it to a connection string (UseDevelopmentStorage=true with Azurite), ` +
        `or set ${setting}__accountName (or ${setting}__blobServiceUri, __queueServiceUri and __tableServiceUri) for identity-based access`,
    );
    return undefined;
  }
  return {
    setting,
    accountName: accountName === '' ? (new URL(blob).hostname.split('.')[0] ?? 'account') : accountName,
    endpoints: { blob, queue, table },
    credential: { kind: 'identity', managedIdentity: isManagedIdentity(r, setting), clientId: r.raw(`${setting}__clientId`) },
  };
}

/** Optional: a Service Bus connection string in `setting`, or `setting__fullyQualifiedNamespace`. */
export function readServiceBusConnection(r: SettingsReader, setting: string): ServiceBusConnection | undefined {
  const text = r.raw(setting);
  if (text !== undefined) {
    if (!/endpoint=sb:\/\//i.test(text)) r.problems.push(`${setting}: not a Service Bus connection string (no Endpoint=sb://…)`);
    return { kind: 'connectionString', setting, connectionString: text };
  }
  const namespace = r.string(`${setting}__fullyQualifiedNamespace`, '', /^([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)?$/);
  if (namespace === '') return undefined;
  return {
    kind: 'identity',
    setting,
    fullyQualifiedNamespace: namespace,
    managedIdentity: isManagedIdentity(r, setting),
    clientId: r.raw(`${setting}__clientId`),
  };
}

/** Setting names, so code, docs and infrastructure tests share one spelling. */
export const settingNames = {
  storage: 'AzureWebJobsStorage',
  serviceBus: 'ServiceBusConnection',
  maxBodyBytes: 'TALLYHO_MAX_BODY_BYTES',
  idempotencyTtlSeconds: 'TALLYHO_IDEMPOTENCY_TTL_SECONDS',
  idempotencySweepSchedule: 'TALLYHO_IDEMPOTENCY_SWEEP_SCHEDULE',
  sequencesAutoCreate: 'TALLYHO_SEQUENCES_AUTO_CREATE',
  sequencesMaxAutoCreated: 'TALLYHO_SEQUENCES_MAX_AUTO_CREATED',
  countersRollupSchedule: 'TALLYHO_COUNTERS_ROLLUP_SCHEDULE',
  countersSafetyWindowSeconds: 'TALLYHO_COUNTERS_SAFETY_WINDOW_SECONDS',
  countersDefaultPartitions: 'TALLYHO_COUNTERS_DEFAULT_PARTITIONS',
  countersMaxIncrement: 'TALLYHO_COUNTERS_MAX_INCREMENT',
  countersAutoCreate: 'TALLYHO_COUNTERS_AUTO_CREATE',
  countersMaxAutoCreated: 'TALLYHO_COUNTERS_MAX_AUTO_CREATED',
  countersSettingsCacheSeconds: 'TALLYHO_COUNTERS_SETTINGS_CACHE_SECONDS',
  countersRollupMaxHits: 'TALLYHO_COUNTERS_ROLLUP_MAX_HITS',
  schedulesWebhookAllowedHosts: 'TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS',
  schedulesWebhookTimeoutMs: 'TALLYHO_SCHEDULES_WEBHOOK_TIMEOUT_MS',
  schedulesWebhookMaxResponseBytes: 'TALLYHO_SCHEDULES_WEBHOOK_MAX_RESPONSE_BYTES',
  schedulesWebhookMaxRedirects: 'TALLYHO_SCHEDULES_WEBHOOK_MAX_REDIRECTS',
  schedulesWebhookAllowPrivate: 'TALLYHO_SCHEDULES_WEBHOOK_ALLOW_PRIVATE_ADDRESSES',
  schedulesAllowedQueues: 'TALLYHO_SCHEDULES_ALLOWED_QUEUES',
  schedulesAllowedServiceBus: 'TALLYHO_SCHEDULES_ALLOWED_SERVICEBUS_ENTITIES',
  schedulesMisfireGraceSeconds: 'TALLYHO_SCHEDULES_MISFIRE_GRACE_SECONDS',
  schedulesMaxConcurrentRuns: 'TALLYHO_SCHEDULES_MAX_CONCURRENT_RUNS',
  schedulesMaxLive: 'TALLYHO_SCHEDULES_MAX_LIVE',
  schedulesPollSeconds: 'TALLYHO_SCHEDULES_POLL_SECONDS',
  schedulesRecheckSeconds: 'TALLYHO_SCHEDULES_RECHECK_SECONDS',
  schedulesRunCheckMs: 'TALLYHO_SCHEDULES_RUN_CHECK_MS',
  schedulesHistoryRuns: 'TALLYHO_SCHEDULES_HISTORY_RUNS',
  schedulesReconcileSchedule: 'TALLYHO_SCHEDULES_RECONCILE_SCHEDULE',
  streamsPartitions: 'TALLYHO_STREAMS_PARTITIONS',
  streamsRouteCacheSeconds: 'TALLYHO_STREAMS_ROUTE_CACHE_SECONDS',
  streamsFlushEvents: 'TALLYHO_STREAMS_FLUSH_EVENTS',
  streamsFlushIntervalMs: 'TALLYHO_STREAMS_FLUSH_INTERVAL_MS',
  streamsFlushMaxEvents: 'TALLYHO_STREAMS_FLUSH_MAX_EVENTS',
  streamsMaxBuffered: 'TALLYHO_STREAMS_MAX_BUFFERED',
  streamsMaxBufferedBytes: 'TALLYHO_STREAMS_MAX_BUFFERED_BYTES',
  streamsMaxBatchEvents: 'TALLYHO_STREAMS_MAX_BATCH_EVENTS',
  streamsMaxEventBytes: 'TALLYHO_STREAMS_MAX_EVENT_BYTES',
  streamsMaxProducers: 'TALLYHO_STREAMS_MAX_PRODUCERS',
  streamsDedupWindowSeconds: 'TALLYHO_STREAMS_DEDUP_WINDOW_SECONDS',
  streamsMaxBlockBytes: 'TALLYHO_STREAMS_MAX_BLOCK_BYTES',
  streamsMaxBlocksPerBlob: 'TALLYHO_STREAMS_MAX_BLOCKS_PER_BLOB',
  streamsIdleRecheckSeconds: 'TALLYHO_STREAMS_IDLE_RECHECK_SECONDS',
  streamsAckTimeoutMs: 'TALLYHO_STREAMS_ACK_TIMEOUT_MS',
  streamsMaxWaitSeconds: 'TALLYHO_STREAMS_MAX_WAIT_SECONDS',
  streamsMaxTypes: 'TALLYHO_STREAMS_MAX_TYPES',
  gatesWaitMaxSeconds: 'TALLYHO_GATES_WAIT_MAX_SECONDS',
  gatesSseMaxSeconds: 'TALLYHO_GATES_SSE_MAX_SECONDS',
  gatesHeartbeatSeconds: 'TALLYHO_GATES_HEARTBEAT_SECONDS',
  gatesWatchIntervalMs: 'TALLYHO_GATES_WATCH_INTERVAL_MS',
  gatesNotifyBatch: 'TALLYHO_GATES_NOTIFY_BATCH',
  gatesMaxWaiters: 'TALLYHO_GATES_MAX_WAITERS',
  gatesCommandWaitMs: 'TALLYHO_GATES_COMMAND_WAIT_MS',
  jobsQueues: 'TALLYHO_JOBS_QUEUES',
  jobsQueuePrefix: 'TALLYHO_JOBS_QUEUE_PREFIX',
  jobsMaxItems: 'TALLYHO_JOBS_MAX_ITEMS',
  jobsMaxOpen: 'TALLYHO_JOBS_MAX_OPEN',
  jobsMaxRequestBytes: 'TALLYHO_JOBS_MAX_REQUEST_BYTES',
  jobsMaxItemBytes: 'TALLYHO_JOBS_MAX_ITEM_BYTES',
  jobsEnvelopeMaxItems: 'TALLYHO_JOBS_ENVELOPE_MAX_ITEMS',
  jobsEnvelopeMaxBytes: 'TALLYHO_JOBS_ENVELOPE_MAX_BYTES',
  jobsClaimCheckBytes: 'TALLYHO_JOBS_CLAIM_CHECK_BYTES',
  jobsItemConcurrency: 'TALLYHO_JOBS_ITEM_CONCURRENCY',
  jobsMaxAttempts: 'TALLYHO_JOBS_MAX_ATTEMPTS',
  jobsRetryDelaySeconds: 'TALLYHO_JOBS_RETRY_DELAY_SECONDS',
  jobsEnqueueParallelism: 'TALLYHO_JOBS_ENQUEUE_PARALLELISM',
  jobsStaleSeconds: 'TALLYHO_JOBS_STALE_SECONDS',
  jobsReconcileSchedule: 'TALLYHO_JOBS_RECONCILE_SCHEDULE',
  jobsBillingRates: 'TALLYHO_JOBS_BILLING_RATES',
  jobsBillingLedgerStream: 'TALLYHO_JOBS_BILLING_LEDGER_STREAM',
  occMaxAttempts: 'TALLYHO_OCC_MAX_ATTEMPTS',
  occMaxWaitMs: 'TALLYHO_OCC_MAX_WAIT_MS',
  storageMaxTries: 'TALLYHO_STORAGE_MAX_TRIES',
  storageTryTimeoutMs: 'TALLYHO_STORAGE_TRY_TIMEOUT_MS',
  signingKey: 'TALLYHO_SIGNING_KEY',
} as const;

/** A six-field NCRONTAB expression (`second minute hour day month day-of-week`), checked by croner. */
function ncrontab(r: SettingsReader, name: string, fallback: string): string {
  const value = r.string(name, fallback);
  if (value.split(/\s+/).length !== 6) {
    r.problems.push(`${name}: "${value}" is not a six-field NCRONTAB expression (second minute hour day month day-of-week)`);
    return fallback;
  }
  try {
    new Cron(value, { paused: true });
  } catch (err) {
    r.problems.push(`${name}: "${value}" is not a valid schedule (${err instanceof Error ? err.message : String(err)})`);
    return fallback;
  }
  return value;
}

/** Room a log line needs around the event itself (type, producer, seq, index, at). */
const streamLineOverheadBytes = 512;

function readStreamSettings(r: SettingsReader): StreamSettings {
  const n = settingNames;
  const settings: StreamSettings = {
    partitions: r.int(n.streamsPartitions, 4, 1, 100),
    routeCacheSeconds: r.int(n.streamsRouteCacheSeconds, 30, 0, 3600),
    flushEvents: r.int(n.streamsFlushEvents, 100, 1, 100_000),
    flushIntervalMs: r.int(n.streamsFlushIntervalMs, 1000, 10, 3_600_000),
    flushMaxEvents: r.int(n.streamsFlushMaxEvents, 5000, 1, 100_000),
    maxBuffered: r.int(n.streamsMaxBuffered, 5000, 1, 100_000),
    maxBufferedBytes: r.int(n.streamsMaxBufferedBytes, 256 * 1024, 4096, 4 * 1024 * 1024),
    maxBatchEvents: r.int(n.streamsMaxBatchEvents, 500, 1, 10_000),
    maxEventBytes: r.int(n.streamsMaxEventBytes, 16 * 1024, 64, 1024 * 1024),
    maxProducers: r.int(n.streamsMaxProducers, 1000, 1, 100_000),
    dedupWindowSeconds: r.int(n.streamsDedupWindowSeconds, 900, 1, 7 * 86_400),
    maxBlockBytes: r.int(n.streamsMaxBlockBytes, 4 * 1024 * 1024, 1024, 4 * 1024 * 1024),
    maxBlocksPerBlob: r.int(n.streamsMaxBlocksPerBlob, 50_000, 1, 50_000),
    idleRecheckSeconds: r.int(n.streamsIdleRecheckSeconds, 60, 1, 86_400),
    ackTimeoutMs: r.int(n.streamsAckTimeoutMs, 30_000, 100, 600_000),
    maxWaitSeconds: r.int(n.streamsMaxWaitSeconds, 10, 0, 300),
    maxTypes: r.int(n.streamsMaxTypes, 1000, 1, 1_000_000),
    // Read here, not in settingNames: host.json needs it and it has no default of ours (see docs/configuration.md).
    taskHub: r.string('TALLYHO_TASK_HUB', 'tallyho'),
  };
  if (settings.maxEventBytes + streamLineOverheadBytes > settings.maxBlockBytes) {
    r.problems.push(`${n.streamsMaxEventBytes}: must be at least ${streamLineOverheadBytes} below ${n.streamsMaxBlockBytes}`);
  }
  if (settings.maxEventBytes + streamLineOverheadBytes > settings.maxBufferedBytes) {
    r.problems.push(
      `${n.streamsMaxEventBytes}: an event could never fit; keep it at least ${streamLineOverheadBytes} below ${n.streamsMaxBufferedBytes}`,
    );
  }
  if (settings.maxBatchEvents > settings.maxBuffered) {
    r.problems.push(`${n.streamsMaxBatchEvents}: a request could never fit; keep it at most ${n.streamsMaxBuffered}`);
  }
  return settings;
}

const allowedHostPattern = /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:\d{1,5})?$/;

function readScheduleSettings(r: SettingsReader): ScheduleSettings {
  const n = settingNames;
  const webhookAllowedHosts = r.list(n.schedulesWebhookAllowedHosts).map((h) => h.toLowerCase());
  for (const host of webhookAllowedHosts) {
    if (!allowedHostPattern.test(host))
      r.problems.push(`${n.schedulesWebhookAllowedHosts}: "${host}" is not a host name, *.domain or host:port`);
  }
  return {
    webhookAllowedHosts,
    webhookTimeoutMs: r.int(n.schedulesWebhookTimeoutMs, 10_000, 100, 120_000),
    webhookMaxResponseBytes: r.int(n.schedulesWebhookMaxResponseBytes, 64 * 1024, 0, 1024 * 1024),
    webhookMaxRedirects: r.int(n.schedulesWebhookMaxRedirects, 3, 0, 10),
    webhookAllowPrivateAddresses: r.bool(n.schedulesWebhookAllowPrivate, false),
    allowedQueues: r.list(n.schedulesAllowedQueues, ['app-*']),
    allowedServiceBusEntities: r.list(n.schedulesAllowedServiceBus, ['app-*']),
    misfireGraceSeconds: r.int(n.schedulesMisfireGraceSeconds, 60, 1, 86_400),
    maxConcurrentRuns: r.int(n.schedulesMaxConcurrentRuns, 10, 1, 50),
    maxLive: r.int(n.schedulesMaxLive, 1000, 1, 100_000),
    pollSeconds: r.int(n.schedulesPollSeconds, 30, 1, 3600),
    recheckSeconds: r.int(n.schedulesRecheckSeconds, 3600, 10, 7 * 86_400),
    runCheckMs: r.int(n.schedulesRunCheckMs, 1000, 100, 600_000),
    historyRuns: r.int(n.schedulesHistoryRuns, 20, 1, 200),
    reconcileSchedule: ncrontab(r, n.schedulesReconcileSchedule, '0 */5 * * * *'),
  };
}

/**
 * One group of settings alone, validated. Timer and queue registrations need theirs when the app
 * loads, before (and without) a storage connection.
 */
function settingsAlone<T>(read: (r: SettingsReader) => T, env: Env): T {
  const r = new SettingsReader(env);
  const settings = read(r);
  failOnProblems(r);
  return settings;
}

/** The schedules settings alone (the reconcile timer's schedule). */
export function scheduleSettings(env: Env = process.env): ScheduleSettings {
  return settingsAlone(readScheduleSettings, env);
}

function readCounterSettings(r: SettingsReader): CounterSettings {
  return {
    rollupSchedule: ncrontab(r, settingNames.countersRollupSchedule, '*/30 * * * * *'),
    defaultSafetyWindowSeconds: r.int(settingNames.countersSafetyWindowSeconds, 60, 0, 3600),
    defaultPartitions: r.int(settingNames.countersDefaultPartitions, 4, 1, 100),
    maxIncrement: r.int(settingNames.countersMaxIncrement, 1_000_000, 1, 1_000_000_000),
    autoCreate: r.bool(settingNames.countersAutoCreate, false),
    maxAutoCreated: r.int(settingNames.countersMaxAutoCreated, 1000, 1, 1_000_000),
    settingsCacheSeconds: r.int(settingNames.countersSettingsCacheSeconds, 30, 0, 3600),
    rollupMaxHits: r.int(settingNames.countersRollupMaxHits, 100_000, 100, 10_000_000),
  };
}

/** Throws one ConfigurationInvalid naming every bad setting the reader found. */
function failOnProblems(r: SettingsReader): void {
  if (r.problems.length === 0) return;
  throw new AppError('ConfigurationInvalid', `Invalid settings:\n  - ${r.problems.join('\n  - ')}`, {
    extra: { settings: r.problems.map((p) => p.slice(0, p.indexOf(':'))) },
  });
}

/** The counter settings alone (the rollup timer's schedule). */
export function counterSettings(env: Env = process.env): CounterSettings {
  return settingsAlone(readCounterSettings, env);
}

/** Queue names: lower-case letters, digits and single hyphens; room left for `-<n>-poison`. */
const queuePrefixPattern = /^(?=.{3,54}$)[a-z0-9]+(-[a-z0-9]+)*$/;
/** Envelope JSON whose sealed (+56 bytes, shared/jobs/seal.ts) base64 form fills the 64 KiB queue message exactly. */
export const maxEnvelopeJsonBytes = 49_152 - 56;

function readJobSettings(r: SettingsReader): JobSettings {
  const n = settingNames;
  const rates = parseRateTable(r.string(n.jobsBillingRates, defaultRatesJson));
  for (const problem of rates.problems) r.problems.push(`${n.jobsBillingRates}: ${problem}`);
  const ledgerStream = r.string(n.jobsBillingLedgerStream, 'billing-invoices', /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/);
  const settings: JobSettings = {
    queues: r.int(n.jobsQueues, 4, 1, 8),
    queuePrefix: r.string(n.jobsQueuePrefix, 'jobs-work', queuePrefixPattern),
    maxItems: r.int(n.jobsMaxItems, 10_000, 1, 100_000),
    maxOpen: r.int(n.jobsMaxOpen, 1000, 1, 100_000),
    maxRequestBytes: r.int(n.jobsMaxRequestBytes, 4 * 1024 * 1024, 1024, 100 * 1024 * 1024),
    maxItemBytes: r.int(n.jobsMaxItemBytes, 256 * 1024, 256, 4 * 1024 * 1024),
    envelopeMaxItems: r.int(n.jobsEnvelopeMaxItems, 32, 1, 99),
    envelopeMaxBytes: r.int(n.jobsEnvelopeMaxBytes, 48_000, 4096, maxEnvelopeJsonBytes),
    claimCheckBytes: r.int(n.jobsClaimCheckBytes, 8192, 64, 32 * 1024),
    itemConcurrency: r.int(n.jobsItemConcurrency, 8, 1, 64),
    maxAttempts: r.int(n.jobsMaxAttempts, 3, 1, 20),
    retryDelaySeconds: r.int(n.jobsRetryDelaySeconds, 10, 0, 3600),
    enqueueParallelism: r.int(n.jobsEnqueueParallelism, 16, 1, 64),
    staleSeconds: r.int(n.jobsStaleSeconds, 120, 5, 86_400),
    reconcileSchedule: ncrontab(r, n.jobsReconcileSchedule, '0 */1 * * * *'),
    billingRates: rates.table,
    billingLedgerStream: ledgerStream === 'none' ? undefined : ledgerStream,
  };
  // An item kept inline must fit an envelope on its own, with room for the envelope's own fields.
  if (settings.claimCheckBytes > settings.envelopeMaxBytes - 1024) {
    r.problems.push(`${n.jobsClaimCheckBytes}: must be at least 1024 below ${n.jobsEnvelopeMaxBytes}`);
  }
  return settings;
}

const defaultIdempotencySweepSchedule = '0 0 * * * *';

/** The idempotency sweep's schedule alone: the timer is registered from it when the app loads. */
export function idempotencySweepSchedule(env: Env = process.env): string {
  return settingsAlone((r) => ncrontab(r, settingNames.idempotencySweepSchedule, defaultIdempotencySweepSchedule), env);
}

/** The job settings alone: the queue triggers and the reconciler timer are registered from them when the app loads. */
export function jobSettings(env: Env = process.env): JobSettings {
  return settingsAlone(readJobSettings, env);
}

/** Never echoes the value: a problem message names the setting and what is wrong with it only. */
function readSigningKey(r: SettingsReader): Buffer | undefined {
  const text = r.raw(settingNames.signingKey);
  if (text === undefined) return undefined;
  const key = parseSigningKey(text);
  if (typeof key !== 'string') return key;
  r.problems.push(`${settingNames.signingKey}: ${key}`);
  return undefined;
}

export function loadConfig(env: Env = process.env): Config {
  const r = new SettingsReader(env);
  const storage = readStorageConnection(r, settingNames.storage);
  const serviceBus = readServiceBusConnection(r, settingNames.serviceBus);
  const config = {
    storage,
    serviceBus,
    storageRetry: {
      maxTries: r.int(settingNames.storageMaxTries, 3, 1, 10),
      tryTimeoutMs: r.int(settingNames.storageTryTimeoutMs, 10_000, 100, 300_000),
    },
    http: {
      maxBodyBytes: r.int(settingNames.maxBodyBytes, 1024 * 1024, 1024, 100 * 1024 * 1024),
      idempotencyTtlSeconds: r.int(settingNames.idempotencyTtlSeconds, 24 * 3600, 60, 30 * 24 * 3600),
      idempotencySweepSchedule: ncrontab(r, settingNames.idempotencySweepSchedule, defaultIdempotencySweepSchedule),
    },
    counters: readCounterSettings(r),
    schedules: readScheduleSettings(r),
    gates: {
      waitMaxSeconds: r.int(settingNames.gatesWaitMaxSeconds, 120, 1, 220),
      sseMaxSeconds: r.int(settingNames.gatesSseMaxSeconds, 300, 10, 3600),
      heartbeatSeconds: r.int(settingNames.gatesHeartbeatSeconds, 15, 1, 120),
      watchIntervalMs: r.int(settingNames.gatesWatchIntervalMs, 1000, 50, 60_000),
      notifyBatchSize: r.int(settingNames.gatesNotifyBatch, 50, 1, 1000),
      maxWaiters: r.int(settingNames.gatesMaxWaiters, 10_000, 1, 100_000),
      commandWaitMs: r.int(settingNames.gatesCommandWaitMs, 15_000, 100, 120_000),
    },
    streams: readStreamSettings(r),
    jobs: readJobSettings(r),
    signingKey: readSigningKey(r),
    sequences: {
      autoCreate: r.bool(settingNames.sequencesAutoCreate, false),
      maxAutoCreated: r.int(settingNames.sequencesMaxAutoCreated, 1000, 1, 1_000_000),
      maxAttempts: r.int(settingNames.occMaxAttempts, 12, 1, 100),
      maxWaitMs: r.int(settingNames.occMaxWaitMs, 5000, 10, 120_000),
    },
  };
  failOnProblems(r);
  // readStorageConnection reports a missing connection as a problem, so failOnProblems has thrown.
  if (storage === undefined) throw new AppError('Internal', 'No storage connection and no problem reported');
  return { ...config, storage };
}

let cached: Config | undefined;

/** The process's configuration, validated on first use. */
export function getConfig(): Config {
  cached ??= loadConfig();
  return cached;
}
