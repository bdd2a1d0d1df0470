/** The counters capability's settings (shared/settings.ts explains the declarations). */
import { bool, group, int, ncrontab, type SettingsOf } from '../settings';

export const counterSettings = group({
  rollupSchedule: ncrontab(
    'TALLYHO_COUNTERS_ROLLUP_SCHEDULE',
    '*/30 * * * * *',
    'when the counter rollup runs: six-field NCRONTAB (second minute hour day month day-of-week)',
  ),
  defaultSafetyWindowSeconds: int(
    'TALLYHO_COUNTERS_SAFETY_WINDOW_SECONDS',
    60,
    0,
    3600,
    'safety window of counters created without one: hits younger than this are not folded yet (0–3600)',
  ),
  defaultPartitions: int('TALLYHO_COUNTERS_DEFAULT_PARTITIONS', 4, 1, 100, 'partitions of counters created without a count (1–100)'),
  maxIncrement: int('TALLYHO_COUNTERS_MAX_INCREMENT', 1_000_000, 1, 1_000_000_000, 'largest |by| of one increment'),
  autoCreate: bool('TALLYHO_COUNTERS_AUTO_CREATE', false, 'create an unknown counter with defaults on its first increment (else 404)'),
  maxAutoCreated: int(
    'TALLYHO_COUNTERS_MAX_AUTO_CREATED',
    1000,
    1,
    1_000_000,
    'counters increments may auto-create at most (callers choose the names); past it 409, nothing created; one caller may auto-create a quarter (429 past it)',
  ),
  settingsCacheSeconds: int(
    'TALLYHO_COUNTERS_SETTINGS_CACHE_SECONDS',
    30,
    0,
    3600,
    "how long an instance reuses a counter's settings when incrementing (0 = read every time)",
  ),
  rollupMaxHits: int(
    'TALLYHO_COUNTERS_ROLLUP_MAX_HITS',
    100_000,
    100,
    10_000_000,
    'hits one rollup run folds per partition at most; the rest wait for the next run',
  ),
});

export type CounterSettings = SettingsOf<typeof counterSettings>;
