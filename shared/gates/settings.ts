/** The gates capability's settings (shared/settings.ts explains the declarations). */
import { group, int, type SettingsOf } from '../settings';

export const gateSettings = group({
  waitMaxSeconds: int(
    'TALLYHO_GATES_WAIT_MAX_SECONDS',
    120,
    1,
    220,
    "longest `…/wait?timeout=` (1–220; Azure's front end drops requests idle for 230 s)",
  ),
  sseMaxSeconds: int(
    'TALLYHO_GATES_SSE_MAX_SECONDS',
    300,
    10,
    3600,
    'how long one gate event stream stays open before the client reconnects',
  ),
  heartbeatSeconds: int(
    'TALLYHO_GATES_HEARTBEAT_SECONDS',
    15,
    1,
    120,
    'heartbeat comments on an open gate event stream, so proxies do not close it as idle',
  ),
  watchIntervalMs: int(
    'TALLYHO_GATES_WATCH_INTERVAL_MS',
    1000,
    50,
    60_000,
    'how often an instance reads a gate while long-poll or SSE clients wait on it there',
  ),
  notifyBatchSize: int(
    'TALLYHO_GATES_NOTIFY_BATCH',
    50,
    1,
    1000,
    'waiting runs one notify activity pushes a release to (batches run in parallel)',
  ),
  maxWaiters: int('TALLYHO_GATES_MAX_WAITERS', 10_000, 1, 100_000, 'runs one generation of a gate may hold waiting'),
  commandWaitMs: int(
    'TALLYHO_GATES_COMMAND_WAIT_MS',
    15_000,
    100,
    120_000,
    "how long create/release/reset wait for the entity's answer before a `202`",
  ),
});

export type GateSettings = SettingsOf<typeof gateSettings>;
