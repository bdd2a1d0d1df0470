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
  /** Stream routes: event type -> partition and resource (RowKey = type), with a version per remap. */
  streamRoutes: 'streamroutes',
  /** Gate audit log: one row per create, release and reset (PartitionKey = gate, RowKey = generation and kind). */
  gateAudit: 'gateaudit',
} as const;

/** Storage queues. */
export const queues = {
  /** Messages of released gated runs whose action is `enqueue`, for workers that poll a queue. */
  gateActions: 'gate-actions',
} as const;

/** Blob containers. */
export const containers = {
  /** Stream logs: append blobs `<partition>/<resource>/<seq>.ndjson`, one writer per resource. */
  streams: 'streams',
} as const;

/** Service Bus entities, used only when a Service Bus connection is configured. */
export const serviceBusEntities = {
  topics: {
    /** Gate releases and resets, for external workers (they bring their own subscriptions). */
    gateEvents: 'gate-events',
  },
  queues: {},
} as const;
