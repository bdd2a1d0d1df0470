/**
 * Every storage and messaging resource the app uses, named once. Code refers to these constants and
 * `infra/` provisions exactly these; a consistency test compares the two.
 */

/** Tables (created on first use as well, so Azurite needs no setup). */
export const tables = {
  /** One entity per sequence: high-water mark and settings. */
  sequences: 'sequences',
  /** Stored responses for `Idempotency-Key` retries, with an expiry. */
  idempotency: 'idempotency',
  /** One settings row per counter (PartitionKey = name). */
  counters: 'counters',
  /** Counter data, partition `name|NN`: hit rows, the partition's total row, idempotency markers. */
  counterData: 'counterdata',
  /** Which counter partitions have hits to fold, per minute bucket; what the rollup visits. */
  counterDirty: 'counterdirty',
  /** One row per schedule (PartitionKey = schedule id): definition, control state, next fire, recent runs. */
  schedules: 'schedules',
  /**
   * Stream routes: event type -> partition and resource (partition `route`, RowKey = type), with a version
   * per remap; and the types admitted per task hub with their count (partition `types|<hub>`, TALLYHO_STREAMS_MAX_TYPES).
   */
  streamRoutes: 'streamroutes',
  /**
   * Gates, one partition each (PartitionKey = gate): the gate row, its registered runs, its releases and
   * its audit records (shared/gates/rows.ts), so a change and its audit record commit together.
   */
  gates: 'gates',
  /**
   * One row per job (PartitionKey = job id), plus the `open` partition (jobs with work left for the
   * reconciler), `finished` (finished jobs by completion time, for the retention purge) and `|slots`
   * (the places among TALLYHO_JOBS_MAX_OPEN, a capped set).
   */
  jobs: 'jobs',
  /** Declared (external and webhook) processors, partition `p`, RowKey = name; their count (partition `|declared`). */
  jobProcessors: 'jobprocessors',
  /** Job results, partition = job id: one row per item (`r|<item>`), tally rows counting them (`t|…`), envelope errors (`x|…`), deliveries workers used (`l|…`). */
  jobResults: 'jobresults',
  /** Named callers (partition `c`, RowKey = name), revoked credential ids (partition `r`) and the names' count (`|names`). */
  callers: 'callers',
} as const;

/** Storage queues. */
export const queues = {
  /** Messages of released gated runs whose action is `enqueue`, for workers that poll a queue. */
  gateActions: 'gate-actions',
  /**
   * Job envelopes, spread over TALLYHO_JOBS_QUEUES of these (default prefix `jobs-work`; the host
   * adds `-poison` queues for messages that keep failing).
   */
  jobsWork: ['jobs-work-0', 'jobs-work-1', 'jobs-work-2', 'jobs-work-3', 'jobs-work-4', 'jobs-work-5', 'jobs-work-6', 'jobs-work-7'],
  /** The work queues' retry lanes (`<prefix>-r-<n>`): in-app processors' retried items, read by triggers of their own. */
  jobsLanes: [
    'jobs-work-r-0',
    'jobs-work-r-1',
    'jobs-work-r-2',
    'jobs-work-r-3',
    'jobs-work-r-4',
    'jobs-work-r-5',
    'jobs-work-r-6',
    'jobs-work-r-7',
  ],
  /**
   * The poison queues of the work queues and their lanes (`<queue>-poison`): the host moves a message
   * there after its last failed delivery, and a trigger of the app listens on each. Provisioned up
   * front because a listener on a queue that does not exist polls it anyway, each poll a 404 that the
   * host logs as an Azure.Core warning (observed on the real host 4.1037: 12 lines per poll, every
   * poll interval, on every instance).
   */
  jobsPoison: [
    'jobs-work-0-poison',
    'jobs-work-1-poison',
    'jobs-work-2-poison',
    'jobs-work-3-poison',
    'jobs-work-4-poison',
    'jobs-work-5-poison',
    'jobs-work-6-poison',
    'jobs-work-7-poison',
    'jobs-work-r-0-poison',
    'jobs-work-r-1-poison',
    'jobs-work-r-2-poison',
    'jobs-work-r-3-poison',
    'jobs-work-r-4-poison',
    'jobs-work-r-5-poison',
    'jobs-work-r-6-poison',
    'jobs-work-r-7-poison',
  ],
  /** Hand-on requests (`<prefix>-d`): a completed job whose processor hands its output on (billing's invoice ledger). */
  jobsDeliveries: 'jobs-work-d',
  /** Cancel requests (`<prefix>-c`): the background step of `DELETE /api/jobs/{id}`, the job's open items recorded cancelled. */
  jobsCancels: 'jobs-work-c',
} as const;

/** Blob containers. */
export const containers = {
  /** Stream logs: append blobs `<partition>/<resource>/<seq>.ndjson`, one writer per resource. */
  streams: 'streams',
  /** Job files: `<job>/input-<hash>.ndjson` (the submitted items; claim checks point into it), `<job>/files/invoice.csv`. */
  jobs: 'jobs',
  /** The app's own secrets: `signing-key`, created on first use when TALLYHO_SIGNING_KEY is not set. */
  secrets: 'secrets',
} as const;

/** Service Bus entities, used only when a Service Bus connection is configured. */
export const serviceBusEntities = {
  topics: {
    /** Gate releases and resets, for external workers (they bring their own subscriptions). */
    gateEvents: 'gate-events',
    /** `JobCompleted` once per job completion (message id = job and round, for duplicate detection). */
    jobEvents: 'job-events',
  },
  queues: {},
} as const;
