/** The streams capability's settings (shared/settings.ts explains the declarations). */
import { group, int, ncrontab, type SettingsOf } from '../settings';

/** Room a log line needs around the event itself (type, producer, seq, index, at). */
const lineOverheadBytes = 512;

export const streamSettings = group(
  {
    sweepSchedule: ncrontab(
      'TALLYHO_STREAMS_SWEEP_SCHEDULE',
      '0 */1 * * * *',
      'when the sweep kicks every writer whose flush is overdue (six-field NCRONTAB): a flush whose wake-up was lost waits at most about this long without traffic',
    ),
    partitions: int('TALLYHO_STREAMS_PARTITIONS', 4, 1, 100, 'partitions a type without a route row is hashed onto (`p00`, `p01`, …)'),
    routeCacheSeconds: int(
      'TALLYHO_STREAMS_ROUTE_CACHE_SECONDS',
      30,
      0,
      3600,
      'how long an instance trusts its cached route of a type (a local remap drops it at once)',
    ),
    flushEvents: int('TALLYHO_STREAMS_FLUSH_EVENTS', 100, 1, 100_000, 'N: a writer flushes once this many events are buffered'),
    flushIntervalMs: int(
      'TALLYHO_STREAMS_FLUSH_INTERVAL_MS',
      1000,
      10,
      3_600_000,
      'T: a writer flushes once its buffer has waited this long',
    ),
    flushMaxEvents: int('TALLYHO_STREAMS_FLUSH_MAX_EVENTS', 5000, 1, 100_000, 'events one flush writes at most'),
    maxBuffered: int('TALLYHO_STREAMS_MAX_BUFFERED', 5000, 1, 100_000, 'unflushed events per writer at most; beyond it appends get 429'),
    maxBufferedBytes: int(
      'TALLYHO_STREAMS_MAX_BUFFERED_BYTES',
      256 * 1024,
      4096,
      4 * 1024 * 1024,
      'unflushed NDJSON bytes per writer at most (bounds its durable state); beyond it, 429',
    ),
    maxBatchEvents: int('TALLYHO_STREAMS_MAX_BATCH_EVENTS', 500, 1, 10_000, 'events one append request may carry'),
    maxEventBytes: int('TALLYHO_STREAMS_MAX_EVENT_BYTES', 16 * 1024, 64, 1024 * 1024, 'largest event (serialised JSON)'),
    maxProducers: int(
      'TALLYHO_STREAMS_MAX_PRODUCERS',
      1000,
      1,
      100_000,
      'producers per writer whose last `seq` is remembered for deduplication',
    ),
    maxProducersPerCaller: int(
      'TALLYHO_STREAMS_MAX_PRODUCERS_PER_CALLER',
      250,
      1,
      100_000,
      "producers one caller identity may hold of a writer's TALLYHO_STREAMS_MAX_PRODUCERS; past it that caller's new producers get 429",
    ),
    dedupWindowSeconds: int(
      'TALLYHO_STREAMS_DEDUP_WINDOW_SECONDS',
      900,
      1,
      7 * 86_400,
      "a producer's last seq is kept this long after its last event; a new producer past the cap waits (429)",
    ),
    maxBlockBytes: int('TALLYHO_STREAMS_MAX_BLOCK_BYTES', 4 * 1024 * 1024, 1024, 4 * 1024 * 1024, 'largest append block'),
    maxBlocksPerBlob: int(
      'TALLYHO_STREAMS_MAX_BLOCKS_PER_BLOB',
      50_000,
      1,
      50_000,
      'blocks per append blob before the log rolls to the next blob',
    ),
    idleRecheckSeconds: int(
      'TALLYHO_STREAMS_IDLE_RECHECK_SECONDS',
      60,
      1,
      86_400,
      'how often an idle flusher looks at its writer without being woken',
    ),
    ackTimeoutMs: int(
      'TALLYHO_STREAMS_ACK_TIMEOUT_MS',
      30_000,
      100,
      600_000,
      "how long a request waits for the writer's receipt (and flush, with `ack=flushed`)",
    ),
    maxWaitSeconds: int(
      'TALLYHO_STREAMS_MAX_WAIT_SECONDS',
      10,
      0,
      300,
      'longest a `wait=true` request waits for room in a full buffer before its 429',
    ),
    maxTypes: int(
      'TALLYHO_STREAMS_MAX_TYPES',
      1000,
      1,
      1_000_000,
      'distinct event types per task hub (each costs a writer and a flusher); a new one past it gets 409, nothing made',
    ),
  },
  (s, report, names) => {
    if (s.maxEventBytes + lineOverheadBytes > s.maxBlockBytes) {
      report(names.maxEventBytes, `must be at least ${lineOverheadBytes} below ${names.maxBlockBytes}`);
    }
    if (s.maxEventBytes + lineOverheadBytes > s.maxBufferedBytes) {
      report(names.maxEventBytes, `an event could never fit; keep it at least ${lineOverheadBytes} below ${names.maxBufferedBytes}`);
    }
    if (s.maxProducersPerCaller > s.maxProducers) {
      report(names.maxProducersPerCaller, `must be at most ${names.maxProducers}`);
    }
    if (s.maxBatchEvents > s.maxBuffered) {
      report(names.maxBatchEvents, `a request could never fit; keep it at most ${names.maxBuffered}`);
    }
  },
);

export type StreamSettings = SettingsOf<typeof streamSettings>;
