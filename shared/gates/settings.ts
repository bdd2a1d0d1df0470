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
    'released runs with an action one action batch covers (about one batch per this many, at most 16, in parallel)',
  ),
  maxWaiters: int('TALLYHO_GATES_MAX_WAITERS', 10_000, 1, 100_000, 'runs one generation of a gate may hold waiting'),
  commandWaitMs: int(
    'TALLYHO_GATES_COMMAND_WAIT_MS',
    15_000,
    100,
    120_000,
    'not used by gates any more: create, release and reset answer once they are written',
  ),
});

export type GateSettings = SettingsOf<typeof gateSettings>;
