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
} as const;

/** Storage queues. */
export const queues = {} as const;

/** Blob containers. */
export const containers = {
  /** Stream logs: append blobs `<partition>/<resource>/<seq>.ndjson`, one writer per resource. */
  streams: 'streams',
} as const;

/** Service Bus entities, used only when a Service Bus connection is configured. */
export const serviceBusEntities = {
  topics: {},
  queues: {},
} as const;
