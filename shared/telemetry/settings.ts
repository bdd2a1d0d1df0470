/** The telemetry settings (shared/settings.ts explains the declarations); exporters follow the OTEL_* variables (docs/operations.md). */
import { group, int, list } from '../settings';

export const telemetrySettings = group({
  callerNames: list(
    'TALLYHO_TELEMETRY_CALLER_NAMES',
    [],
    'caller-chosen names (sequences, counters, gates, schedules, stream types) that may appear in metric and span attributes: exact names or `prefix*`, `*` for all; empty: none',
  ),
  maxNames: int(
    'TALLYHO_TELEMETRY_MAX_NAMES',
    100,
    1,
    1000,
    'distinct names per kind recorded as attributes by one instance; later ones are recorded as `_OTHER`',
  ),
});
