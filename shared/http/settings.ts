/** The HTTP layer's settings: body limits and Idempotency-Key responses (shared/settings.ts explains the declarations). */
import { group, int, ncrontab } from '../settings';

export const httpSettings = group({
  maxBodyBytes: int(
    'TALLYHO_MAX_BODY_BYTES',
    1024 * 1024,
    1024,
    100 * 1024 * 1024,
    'largest request body any endpoint reads (endpoints may set lower limits)',
  ),
  maxHeld: int(
    'TALLYHO_HTTP_MAX_HELD',
    2000,
    1,
    100_000,
    "long polls and event streams one instance holds open, a quarter per caller; past it the largest holder's oldest ends early",
  ),
  idempotencyTtlSeconds: int(
    'TALLYHO_IDEMPOTENCY_TTL_SECONDS',
    24 * 3600,
    60,
    30 * 24 * 3600,
    'how long a response is kept for its `Idempotency-Key`',
  ),
  idempotencySweepSchedule: ncrontab(
    'TALLYHO_IDEMPOTENCY_SWEEP_SCHEDULE',
    '0 0 * * * *',
    'when expired `Idempotency-Key` responses are deleted: six-field NCRONTAB (hourly by default)',
  ),
});
